// Package surfaces delivers the thread feed to the chat systems people answer from (Matrix,
// Slack): for each conversation a surface serves, it posts a card when an item opens, edits it
// as the item changes and closes (saying who decided, how and when), and posts a finished
// job's or agent's report in order after its card. The feed is the outbox: a surface's
// position in it and the card of each item it showed are saved together, in one transaction,
// after each delivery (store.SurfaceCards), so a surface stopped at any point (a crash between
// a decision and the card's edit included) resumes where it was and shows each change once;
// a send retried after a crash carries the same transaction id, which the chat system
// answers with the message already sent.
//
// The chat systems themselves are adapters (packages matrix and slack below this one): each
// renders an item its own way and reads people's answers, which it relays through
// threadfeed's relays as the chat account that answered. This package knows no chat protocol.
package surfaces
