package responseapi

import (
	responsev1 "github.com/turncli/turncli/gen/turncli/response/v1"
	"github.com/turncli/turncli/primary/response"
)

var statusToProto = map[response.Status]responsev1.CallStatus{
	response.Queued:    responsev1.CallStatus_CALL_STATUS_QUEUED,
	response.Running:   responsev1.CallStatus_CALL_STATUS_RUNNING,
	response.Waiting:   responsev1.CallStatus_CALL_STATUS_WAITING,
	response.Completed: responsev1.CallStatus_CALL_STATUS_COMPLETED,
	response.Failed:    responsev1.CallStatus_CALL_STATUS_FAILED,
	response.Cancelled: responsev1.CallStatus_CALL_STATUS_CANCELLED,
}

func receiptsToProto(views []response.ReceiptView) []*responsev1.Receipt {
	out := make([]*responsev1.Receipt, len(views))
	for i, v := range views {
		out[i] = receiptToProto(v)
	}
	return out
}

func receiptToProto(v response.ReceiptView) *responsev1.Receipt {
	return &responsev1.Receipt{
		CallId:           v.CallID,
		Toolkit:          v.Toolkit,
		Function:         v.Function,
		Status:           statusToProto[v.Status],
		OutcomeJson:      string(v.Outcome),
		ParentBashCallId: v.Parent,
		AttachmentsJson:  string(v.Attachments),
		Traits:           traitsToProto(v.Traits),
	}
}
