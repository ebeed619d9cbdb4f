package store

// Prompts keeps request_approval and permission_prompt requests and permission allow-lists.
type Prompts interface{}
