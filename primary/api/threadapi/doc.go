// Package threadapi serves ThreadEventService: it streams the thread feed (package
// primary/threadfeed) to the runtime from the cursor the runtime keeps, and relays the
// decisions and form answers people make on its chat surface, with the chat account that
// made them, and mints the decision links of package primary/surfaces/links.
//
// It decides nothing (the feed and the engines it calls do) and does not authenticate (the
// roleauth interceptor admits only the runtime credential). It is one of the primary's API
// adapters (docs/ARCHITECTURE.md): only package primary imports it.
package threadapi
