// Package statedir owns what a primary's state directory says about the process using it: the
// lock a primary holds on the directory for its whole life, so that a second primary on the
// same directory refuses to start instead of overwriting the first one's files, and
// endpoints.json, where the serving primary says where it listens. Readers (the operator CLI,
// `mindroom-primary shell`) learn from it whether the recorded primary still runs.
//
// It does not create the directory or decide what else lives in it; the primary does.
package statedir
