package slack

// Slack's limits as documented for Block Kit, and the budgets this package keeps within them.
const (
	// maxBlocks is Slack's limit of blocks per message.
	maxBlocks = 50
	// maxSectionText is Slack's limit of characters in a section's text.
	maxSectionText = 3000
	// maxCardText bounds all section texts of one message: Slack refuses with
	// msg_blocks_too_long well before its 40 000 character text limit (about 13 000 characters
	// of blocks), so a card stays under that.
	maxCardText = 12000
	// maxTitle keeps a title to one readable line.
	maxTitle = 300
	// maxFallback bounds the notification text a card or report carries beside its blocks.
	maxFallback = 150
	// maxNote bounds the note of a closing line.
	maxNote = 500
	// maxButtonValue is Slack's limit of a button's value.
	maxButtonValue = 2000
	// maxPrivateMetadata is Slack's limit of a modal's private metadata.
	maxPrivateMetadata = 3000
	// maxQuestions is the most questions a form has (the contract's limit; a modal holds 100
	// blocks).
	maxQuestions = 20
	// maxAnswerText is the longest answer text a modal input accepts (the contract's limit).
	maxAnswerText = 2000
	// maxModalTitle is Slack's limit of a modal's title.
	maxModalTitle = 24
	// maxOptionText is Slack's limit of an option's text.
	maxOptionText = 75
)

// truncatedMarker ends every text that was cut to fit.
const truncatedMarker = "(truncated)"
