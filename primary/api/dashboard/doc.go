// Package dashboard serves the operators' web dashboard under /ui/ on the primary's REST
// listener: sign-in, the inbox of everything waiting for a person (durable approvals, call
// approvals, approval requests, permission prompts, the signed-in operator's question forms
// and, for an admin, the forms waiting for other people), question forms, and background jobs
// with their live logs. Pages are rendered on the
// server with html/template; one small script of ours (embedded, like the templates and the
// style sheet) keeps them live from an event stream and follows job logs.
//
// It owns the browser side of safety: server-side sessions (a random id in an HttpOnly,
// SameSite=Strict cookie, idle and absolute expiry, a bound per operator in which a newer
// sign-in ends that operator's oldest session and nobody else's, and an end, with the requests
// they serve, the moment the primary says their credential was revoked), a limit on refused
// sign-ins per address that never refuses a credential the server accepts (429 with
// Retry-After, counted in package authlimit), CSRF protection on every state change
// (a per-session token compared in constant time, and cross-site requests refused by their
// Origin and Sec-Fetch-Site headers), a strict Content-Security-Policy and the other response
// headers, and rendering every text an agent, a tool or a job produced inert (escaped; job
// output's ANSI colours mapped to a fixed set of CSS classes after escaping).
//
// It decides nothing about operators' rights and keeps no state of the primary: every read
// and every decision is an OperatorService call, made through the primary's in-process gRPC
// connection with the signed-in operator's own credential as the bearer, so the server answers
// exactly as it would answer that operator's curl. It only hides what the server would refuse
// (WhoAmI says the role).
//
// It is one of the primary's API adapters (docs/ARCHITECTURE.md): only package primary
// imports it.
package dashboard
