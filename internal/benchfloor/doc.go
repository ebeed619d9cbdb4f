// Package benchfloor holds the floors turncli-bench measures turncli against, each doing only
// the transport work of the path it stands beside: a trivial net/http server answering the Agent
// CLI's two requests with JSON echoes (HTTPHandler), the same server holding its GETs until
// released (Parking, beside parked long polls), a gRPC unary echo of AgentCLIService
// (GRPCEcho), and in floorclient/ the minimal standard-library program that makes the same two
// loopback requests as one `mindroom-agent tools call`. The distance between a turncli path and
// its floor, measured in the same run on the same machine, is turncli's own cost.
//
// It is benchmark support only: nothing in production imports it, and it checks nothing a real
// server must check (no grant, no window, no strict parsing).
package benchfloor
