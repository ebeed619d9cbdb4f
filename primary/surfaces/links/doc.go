// Package links is the neutral surface: signed decision links for the chats the primary does
// not speak (mail, SMS, a chat without buttons). A runtime asks for the links of one item and
// one chat account (Minter.Mint); each link lets the person that account is linked to take one
// decision on that item by opening it in a browser (Handler): a GET shows the item and a
// button, and only the POST of that button relays the decision, so a previewer or a mail
// scanner that fetches the link decides nothing.
//
// A link's token carries the item, the account, the decision and an expiry, signed with
// HMAC-SHA256 under the primary's links key (<state-dir>/credentials/links.key); nothing about
// a link is stored. It is single-use by construction: its decision closes the item, and the
// feed refuses every later decision, whoever holds the link.
//
// It owns the links' form, signature and pages. It decides nothing about the items: which
// decisions a person may take, and taking them, are package threadfeed's (Feed.Choices,
// Feed.Decide), under the engines' rules.
package links
