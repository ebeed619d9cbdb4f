package toolhost

import (
	"encoding/json"
	"errors"
	"fmt"

	conversationv1 "github.com/turncli/turncli/gen/turncli/conversation/v1"
	toolhostv1 "github.com/turncli/turncli/gen/turncli/toolhost/v1"
	"github.com/turncli/turncli/internal/canonjson"
	"github.com/turncli/turncli/primary/catalog"
)

// registration is a validated RegisterToolkit.
type registration struct {
	name        string
	description string
	deferred    bool
	def         catalog.Definition
}

// definitionFromProto converts a host's definition for the catalog.
func definitionFromProto(d *toolhostv1.ToolkitDefinition) catalog.Definition {
	def := catalog.Definition{Instructions: d.GetInstructions()}
	for _, f := range d.GetFunctions() {
		def.Functions = append(def.Functions, catalog.Function{
			Name:         f.GetName(),
			Description:  f.GetDescription(),
			InputSchema:  json.RawMessage(f.GetInputSchemaJson()),
			Instructions: f.GetInstructions(),
			Traits:       traitsFromProto(f.GetTraits()),
		})
	}
	return def
}

// traitsFromProto is a host function's traits; an absent message means none.
func traitsFromProto(t *toolhostv1.FunctionTraits) catalog.Traits {
	return catalog.Traits{
		NeedsConfirmation: t.GetNeedsConfirmation(),
		UserInput:         t.GetUserInput(),
		ExternalExecution: t.GetExternalExecution(),
		EndsTurn:          t.GetEndsTurn(),
	}
}

var attachmentKinds = map[toolhostv1.AttachmentKind]string{
	toolhostv1.AttachmentKind_ATTACHMENT_KIND_IMAGE: "image",
	toolhostv1.AttachmentKind_ATTACHMENT_KIND_AUDIO: "audio",
	toolhostv1.AttachmentKind_ATTACHMENT_KIND_VIDEO: "video",
	toolhostv1.AttachmentKind_ATTACHMENT_KIND_FILE:  "file",
}

// resultFromProto turns a host's CallResult into what the call returns.
func resultFromProto(r *toolhostv1.CallResult) (catalog.Result, error) {
	switch out := r.GetOutcome().(type) {
	case *toolhostv1.CallResult_Error:
		if out.Error == "" {
			return catalog.Result{}, errors.New("Tool host reported a failure without a message")
		}
		return catalog.Result{}, errors.New(out.Error)
	case *toolhostv1.CallResult_ValueJson:
		value, err := canonjson.Parse([]byte(out.ValueJson))
		if err != nil {
			return catalog.Result{}, fmt.Errorf("Tool host returned a result that is not JSON: %v", err)
		}
		res := catalog.Result{Value: value}
		for i, a := range r.GetAttachments() {
			kind, ok := attachmentKinds[a.GetKind()]
			if !ok || a.GetMimeType() == "" || a.GetSize() < 0 {
				return catalog.Result{}, fmt.Errorf("Tool host returned an invalid attachment %d: kind and mime_type are required, size must not be negative", i)
			}
			res.Attachments = append(res.Attachments, catalog.Attachment{
				Kind: kind, MimeType: a.GetMimeType(), Name: a.GetName(), URI: a.GetUri(), Size: a.GetSize(),
			})
		}
		return res, nil
	}
	return catalog.Result{}, errors.New("Tool host sent a result with neither value_json nor error")
}

// identityToProto is the identity a host sees: the response's, never the arguments'.
func identityToProto(id catalog.Identity) *toolhostv1.CallIdentity {
	return &toolhostv1.CallIdentity{
		ResponseId:   id.ResponseID,
		AgentName:    id.Agent,
		RequesterId:  id.Requester,
		Conversation: &conversationv1.Conversation{Channel: id.Channel, Thread: id.Thread},
	}
}
