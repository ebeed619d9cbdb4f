// Package secrets keeps the primary's live secrets — operators', workers' and the runtime's
// credentials, tool servers' configured credentials and every live grant — and redacts them
// from the texts people see and logs keep, replacing each with secretmask.Redacted.
//
// Every credential the primary mints is 32 random bytes in unpadded base64url: 43 characters
// (see TokenShaped), and some are known here only by their SHA-256 digest (an operator's
// credential exists nowhere in clear once it is handed out). So a text is scanned once for
// runs of base64url characters, and each 43-character window of a run that can end a token is
// hashed and looked up in one set of digests: the cost grows with the length of the text, not
// with the number of live secrets. Secrets of any other shape (a credential an administrator
// configured) are few and are searched for as they are.
//
// It does not decide what is a secret: the owner of each (the grant index, the operator index,
// the primary's credential loading) adds it when it is created or loaded and removes it when
// it dies. Texts already kept are not revisited when a secret is added later.
package secrets
