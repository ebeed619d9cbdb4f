// Package messages is a scripted model behind the streaming Anthropic Messages API, for tests
// that run the real Claude Code CLI without reaching any real model.
//
// A Server listens on loopback and plays a Script: each request of the main conversation (one
// that offers the model tools) gets the next Step, a final text or a tool use, streamed as
// server-sent events the way the API streams them. Requests Claude Code makes beside the
// conversation (a title, a quota probe, anything offering no tools) get a short text and
// consume no step; so do token counts. Every request is recorded, so a test can assert what
// the model was sent: which tool results came back, whether a denial reached it.
//
// It is test support only; nothing in production imports it, and it uses only the standard
// library.
package messages
