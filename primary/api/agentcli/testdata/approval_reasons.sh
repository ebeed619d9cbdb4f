#!/usr/bin/env bash
# An agent's script that calls a function needing a person's confirmation and branches on how
# the call ended, reading the receipt with jq as any script would.
#
# usage: approval_reasons.sh DENIED_CALL_ID EXPIRING_CALL_ID READY_FIFO
#
# The first call is re-attached by its call id after a client timeout, then the script writes
# "reattached" to READY_FIFO, where the test denies it. Nobody decides the second call, which
# expires. Exit 0 when every step went as a script expects; otherwise a FAIL line and exit 1.
set -u
denied_id=$1 expiring_id=$2 ready=$3
args='{}'

fail() {
  echo "FAIL: $*"
  exit 1
}
field() { printf '%s' "$1" | jq -r "$2"; }

# Reaching --timeout is not a denial: exit 3, and the call is still waiting.
out=$(mindroom-agent tools call test.confirm_echo "$args" --call-id "$denied_id" --timeout 1)
code=$?
[ "$code" = 3 ] || fail "a call waiting past --timeout exited $code: $out"
[ "$(field "$out" .status)" = waiting ] || fail "a call waiting past --timeout: $out"

# The same call id again shows that same waiting call; nothing new is asked for.
out=$(mindroom-agent tools call test.confirm_echo "$args" --call-id "$denied_id" --timeout 0)
code=$?
[ "$code" = 3 ] || fail "re-attaching exited $code: $out"
[ "$(field "$out" .status)" = waiting ] || fail "re-attaching: $out"
[ "$(field "$out" .call_id)" = "$denied_id" ] || fail "re-attaching showed another call: $out"

echo reattached >"$ready"

out=$(mindroom-agent calls wait "$denied_id" --timeout 60)
code=$?
[ "$code" = 1 ] || fail "a denied call exited $code: $out"
[ "$(field "$out" .status)" = failed ] || fail "a denied call: $out"
case "$(field "$out" .outcome.reason)" in
  approval_denied) echo "denied by $(field "$out" .outcome.decided_by): $(field "$out" .outcome.error)" ;;
  approval_expired) fail "a denied call read as expired: $out" ;;
  *) fail "a denied call has no reason: $out" ;;
esac

out=$(mindroom-agent tools call test.confirm_echo "$args" --call-id "$expiring_id" --timeout 1)
code=$?
[ "$code" = 3 ] || fail "the second call exited $code before its expiry: $out"
[ "$(field "$out" .status)" = waiting ] || fail "the second call before its expiry: $out"

out=$(mindroom-agent calls wait "$expiring_id" --timeout 60)
code=$?
[ "$code" = 1 ] || fail "an expired call exited $code: $out"
case "$(field "$out" .outcome.reason)" in
  approval_expired) echo "expired, decided by $(field "$out" .outcome.decided_by): $(field "$out" .outcome.error)" ;;
  approval_denied) fail "an expired call read as denied: $out" ;;
  *) fail "an expired call has no reason: $out" ;;
esac
echo ok
