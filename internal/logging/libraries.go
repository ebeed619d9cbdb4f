package logging

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"google.golang.org/grpc/grpclog"
)

// HTTPServerLog is the ErrorLog of an http.Server: its own lines ("http: Accept error",
// "TLS handshake error", a handler's panic) become warnings of logger, so they are JSON
// when JSON is chosen, with the component named.
func HTTPServerLog(logger *slog.Logger) *log.Logger {
	return slog.NewLogLogger(logger.With("source", "net/http").Handler(), slog.LevelWarn)
}

// RouteLibraries sends the lines the libraries under a daemon log on their own to logger:
// the standard log package's (and so net/http's default), gRPC's and OpenTelemetry's. It sets
// process-wide state, so only a main calls it, once, before any gRPC or OpenTelemetry use.
//
// gRPC's own logger prints errors only unless GRPC_GO_LOG_SEVERITY_LEVEL says otherwise; its
// info and warning lines (a reconnect, a closed transport) are routine here, so they are kept
// at debug level and its errors at error level.
func RouteLibraries(logger *slog.Logger) {
	slog.SetDefault(logger)
	grpclog.SetLoggerV2(grpcLogger{logger.With("source", "grpc")})
	otelLog := logger.With("source", "opentelemetry")
	otel.SetLogger(logr.FromSlogHandler(otelLog.Handler()))
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		otelLog.Error("opentelemetry failed", "err", err)
	}))
}

// grpcLogger is grpclog.LoggerV2 on a slog.Logger.
type grpcLogger struct{ l *slog.Logger }

func (g grpcLogger) Info(args ...any)                 { g.l.Debug(fmt.Sprint(args...)) }
func (g grpcLogger) Infoln(args ...any)               { g.l.Debug(sprintln(args)) }
func (g grpcLogger) Infof(format string, args ...any) { g.l.Debug(fmt.Sprintf(format, args...)) }
func (g grpcLogger) Warning(args ...any)              { g.l.Debug(fmt.Sprint(args...)) }
func (g grpcLogger) Warningln(args ...any)            { g.l.Debug(sprintln(args)) }
func (g grpcLogger) Warningf(format string, args ...any) {
	g.l.Debug(fmt.Sprintf(format, args...))
}
func (g grpcLogger) Error(args ...any)                 { g.l.Error(fmt.Sprint(args...)) }
func (g grpcLogger) Errorln(args ...any)               { g.l.Error(sprintln(args)) }
func (g grpcLogger) Errorf(format string, args ...any) { g.l.Error(fmt.Sprintf(format, args...)) }

// Fatal lines end the process, as grpclog's contract says they do.
func (g grpcLogger) Fatal(args ...any) { g.l.Error(fmt.Sprint(args...)); exit() }
func (g grpcLogger) Fatalln(args ...any) {
	g.l.Error(sprintln(args))
	exit()
}
func (g grpcLogger) Fatalf(format string, args ...any) {
	g.l.Error(fmt.Sprintf(format, args...))
	exit()
}

// V reports whether gRPC's verbose lines (which it logs as info) are wanted: only at debug level.
func (g grpcLogger) V(int) bool { return g.l.Enabled(context.Background(), slog.LevelDebug) }

// exit ends the process after a gRPC fatal line (a variable for the tests).
var exit = func() { os.Exit(1) }

func sprintln(args []any) string {
	s := fmt.Sprintln(args...)
	return s[:len(s)-1]
}
