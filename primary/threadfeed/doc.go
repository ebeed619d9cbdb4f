// Package threadfeed renders the thread feed (store.ThreadEvents) for the people of each
// conversation and relays their decisions. A reader (a runtime over ThreadEventService, or a
// chat surface in this process) reads from a cursor and gets, for each event, the item it
// tells of as the item now stands (a background command's approval, a plan approval or
// permission prompt, a CLI call's approval, a question form, a plan snapshot, a job or
// background agent), with what people may do while it is open and how it closed; a job's or
// agent's final report follows in chunks of the size the reader names. Everything shown is
// redacted of live secrets first. Readers are woken when a transaction appends to the feed,
// and read again at a slow pace besides.
//
// A relay (Decide, SaveFormDraft, SubmitForm, CancelForm) takes what a person did on a chat
// account as the person the account is linked to (store.IdentityLinks) and calls the same
// engine functions the operator API calls, so each rule keeps its one home there. The rule
// this package owns is that nobody approves or allows what they saw only a truncated preview
// of.
//
// It decides nothing else about the items, keeps no state but its readers' wake-up, and
// knows no wire format: package primary/api/threadapi serves it as ThreadEventService.
package threadfeed
