package testtk

import "github.com/turncli/turncli/primary/catalog"

const (
	// pixelPNG is a valid 1x1 transparent PNG, base64-encoded.
	pixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
	// pixelSize is the decoded length of pixelPNG.
	pixelSize = 70
)

// media returns {"ok":true} with the pixel as an image attachment.
func media() (catalog.Result, error) {
	return catalog.Result{
		Value: map[string]any{"ok": true},
		Attachments: []catalog.Attachment{{
			Kind:     "image",
			MimeType: "image/png",
			Name:     "pixel.png",
			URI:      "data:image/png;base64," + pixelPNG,
			Size:     pixelSize,
		}},
	}, nil
}
