package mcpgateway_test

import (
	"testing"

	"github.com/turncli/turncli/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }
