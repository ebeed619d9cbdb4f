package faultgrpc

import (
	"errors"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/turncli/turncli/internal/fault"
)

func TestFromStatusReadsBackTheKindEveryCodeWasMadeFrom(t *testing.T) {
	for _, k := range fault.Kinds() {
		got := FromStatus(Status(t.Context(), nil, "/s/m", fault.New(k, "said "+k.String())))
		if kind, ok := fault.KindOf(got); !ok || kind != k {
			t.Errorf("%v: read back as %v (%v)", k, kind, got)
		}
		if k != fault.Internal && got.Error() != "said "+k.String() {
			t.Errorf("%v: message %q", k, got.Error())
		}
	}
	t.Run("ACodeNoKindMapsToIsInternal", func(t *testing.T) {
		if k, _ := fault.KindOf(FromStatus(status.Error(codes.DataLoss, "x"))); k != fault.Internal {
			t.Fatalf("DataLoss read as %v", k)
		}
	})
	t.Run("AnErrorThatIsNoStatusPassesUnchanged", func(t *testing.T) {
		plain := errors.New("plain")
		if got := FromStatus(plain); got != plain {
			t.Fatalf("got %v", got)
		}
	})
}
