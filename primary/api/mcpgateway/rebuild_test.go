package mcpgateway_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/internal/testenv"
)

// TestARetiredCatalogIsRefusedUntilRebound: while the runtime rebuilds the catalog, tools/list
// is refused with -32002 and a call is an isError result naming the rebuild; after the rebind
// both work again.
func TestARetiredCatalogIsRefusedUntilRebound(t *testing.T) {
	env := testenv.Start(t)
	o := open(t, env)
	cs := connect(t, o, revisions[0])
	ctx := context.Background()
	if _, err := env.Runtime.RetireCatalog(ctx, &responsev1.RetireCatalogRequest{ResponseId: o.id}); err != nil {
		t.Fatal(err)
	}
	_, err := cs.ListTools(ctx, nil)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32002 || !strings.Contains(rpcErr.Message, "being rebuilt") {
		t.Fatalf("tools/list of a retired catalog = %v", err)
	}
	var res *sdk.CallToolResult
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "test__echo"})
	if err != nil || !res.IsError || !strings.Contains(text(res.Content[0]), "being rebuilt") {
		t.Fatalf("tools/call in a retired catalog = %v, %v", res, err)
	}
	if _, err := env.Runtime.RebindCatalog(ctx, &responsev1.RebindCatalogRequest{ResponseId: o.id}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list after the rebind: %v", err)
	}
	if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "test__echo"}); err != nil || res.IsError {
		t.Fatalf("tools/call after the rebind = %v, %v", res, err)
	}
}
