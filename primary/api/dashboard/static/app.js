// The dashboard's one script: it keeps pages live from the event stream (fetching again the
// server-rendered fragments a change affects), counts down deadlines and follows job logs.
// Everything it inserts was rendered and escaped by the server.
(function () {
  'use strict';

  function get(url) {
    return fetch(url, {credentials: 'same-origin', headers: {'X-Requested-With': 'fetch'}}).then(function (r) {
      if (r.status === 401) {
        window.location.assign('/ui/signin');
        throw new Error('signed out');
      }
      return r;
    });
  }

  // A fragment being typed into is refreshed once the typing stops (on blur), so a half-written
  // comment is not lost.
  function busy(el) {
    var a = document.activeElement;
    return a && el.contains(a) && /^(INPUT|TEXTAREA|SELECT)$/.test(a.tagName) && a.value !== '';
  }

  // At most one request per fragment is in flight: events arriving meanwhile (a burst of
  // them, as a busy agent makes) ask for one more refresh when it returns, not one each.
  var timers = new WeakMap();
  var inflight = new WeakMap();
  function refresh(el) {
    if (inflight.has(el)) {
      inflight.set(el, 'again');
      return;
    }
    if (timers.has(el)) return;
    timers.set(el, setTimeout(function () {
      timers.delete(el);
      if (busy(el)) {
        document.activeElement.addEventListener('blur', function () { refresh(el); }, {once: true});
        return;
      }
      inflight.set(el, true);
      get(el.dataset.live).then(function (r) {
        if (!r.ok) return null;
        return r.text();
      }).then(function (html) {
        if (html === null) return;
        el.innerHTML = html;
        countdown();
      }).catch(function () {}).then(function () {
        var again = inflight.get(el) === 'again';
        inflight.delete(el);
        if (again) refresh(el);
      });
    }, 50));
  }

  function affected(el, kind, subject) {
    if (el.dataset.subject && kind !== 'events.gap' && el.dataset.subject !== subject) return false;
    return (el.dataset.kinds || '').split(' ').some(function (k) {
      return k !== '' && (k === kind || (k.endsWith('.') && kind.indexOf(k) === 0));
    });
  }

  function listen(url) {
    var source = new EventSource(url);
    var live = function () { return document.querySelectorAll('[data-live]'); };
    // After every (re)connection: catch up on what happened while nobody watched.
    source.addEventListener('ready', function () { live().forEach(refresh); });
    source.onmessage = function (e) {
      var change;
      try { change = JSON.parse(e.data); } catch (err) { return; }
      live().forEach(function (el) {
        if (affected(el, change.kind, change.subject)) refresh(el);
      });
    };
  }

  function countdown() {
    document.querySelectorAll('[data-deadline]').forEach(function (el) {
      var left = Math.round((Date.parse(el.dataset.deadline) - Date.now()) / 1000);
      if (isNaN(left)) return;
      if (left <= 0) { el.textContent = 'expiring'; return; }
      var m = Math.floor(left / 60), s = left % 60;
      el.textContent = (m > 0 ? m + 'm' : '') + s + 's left';
    });
  }

  // followLog appends a job's log as it grows: the server answers each piece as escaped HTML
  // with the offset and colour state to continue from.
  function followLog(pre) {
    var offset = 0, state = '';
    var follow = document.getElementById('follow');
    function finished() {
      var s = document.querySelector('[data-job-running]');
      return s !== null && s.dataset.jobRunning === 'false';
    }
    function step() {
      var final = finished();
      var url = pre.dataset.src + '?offset=' + offset + '&state=' + encodeURIComponent(state) + (final ? '&final=1' : '');
      get(url).then(function (r) {
        if (!r.ok) throw new Error('log: ' + r.status);
        offset = Number(r.headers.get('X-Log-Offset')) || offset;
        state = r.headers.get('X-Log-State') || '';
        return r.text();
      }).then(function (html) {
        if (html !== '') {
          pre.insertAdjacentHTML('beforeend', html);
          if (follow === null || follow.checked) pre.scrollTop = pre.scrollHeight;
        }
        if (html === '' && final) {
          pre.dataset.complete = 'true';
          return;
        }
        setTimeout(step, html === '' ? 500 : 50);
      }).catch(function () { setTimeout(step, 2000); });
    }
    step();
  }

  // A fragment with data-poll is also fetched again every that many milliseconds: what it
  // shows (running commands, windows, receipts) changes without an event for each change.
  function poll() {
    document.querySelectorAll('[data-live][data-poll]').forEach(function (el) {
      var every = Number(el.dataset.poll);
      if (every >= 500) setInterval(function () { if (!document.hidden) refresh(el); }, every);
    });
  }

  document.addEventListener('DOMContentLoaded', function () {
    if (document.body.dataset.events) listen(document.body.dataset.events);
    poll();
    countdown();
    setInterval(countdown, 1000);
    var log = document.getElementById('job-log');
    if (log) followLog(log);
  });
})();
