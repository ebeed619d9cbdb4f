// Package slack is the Slack surface of a conversation's thread: it posts the cards people must
// answer (approvals, permission prompts, question forms, plan snapshots) into the conversation's
// Slack thread as Block Kit sections with buttons, closes them with chat.update once settled,
// posts reports in order, and serves Slack's interactivity endpoint, turning signed button
// clicks and modal submissions into Answers for its caller.
//
// It owns Slack's rendering and limits, the escaping of untrusted text for Slack mrkdwn, the
// request signatures and the refusal of replayed requests. It does not own the thread feed, does
// not decide who may answer or whether an answer is still current (its caller's Decide does),
// and stores nothing: the caller maps feed items to Cards, records each message's ts and, after
// a crash between posting and recording, finds the message again with FindCard.
package slack
