package matrix

import "strings"

// modePrefix starts a mode command: "!mode <agent> minimal|standard".
const modePrefix = "!mode"

// parseMode reads a message body as a mode command. isCommand is false when the body is not
// one at all; agent and mode are empty when it starts with "!mode" but is not of the form
// "!mode <agent> minimal|standard" (Malformed, so the caller can say how it goes).
func parseMode(body string) (agent, mode string, isCommand bool) {
	fields := strings.Fields(body)
	if len(fields) == 0 || fields[0] != modePrefix {
		return "", "", false
	}
	if len(fields) != 3 || (fields[2] != ModeMinimal && fields[2] != ModeStandard) {
		return "", "", true
	}
	return fields[1], fields[2], true
}
