package main

import (
	"fmt"
	"regexp"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
)

// The CLI's words for the operator API's enum values: the words a person types for them (the
// values of --status, --kind, --scope and MODE, the decision verbs), never the proto names.
// Tables, records and the primary's own messages all name enum values through word.

// decisionWords is each decision as it is typed: the verb that makes it, with an allow's
// --scope.
var decisionWords = func() map[operatorv1.Decision]string {
	words := map[operatorv1.Decision]string{
		operatorv1.Decision_DECISION_APPROVE: "approve", operatorv1.Decision_DECISION_DENY: "deny",
		operatorv1.Decision_DECISION_COMMENT: "comment",
	}
	for scope, d := range allowScopes {
		words[d] = "allow --scope " + scope
	}
	return words
}()

// wordBook is the typed word of each enum value that a flag, an argument or a verb takes.
type wordBook map[protoreflect.FullName]map[protoreflect.EnumNumber]string

var enumWords = func() wordBook {
	b := wordBook{}
	addWords(b, approvalStatuses)
	addWords(b, callApprovalStatuses)
	addWords(b, promptStatuses)
	addWords(b, promptKinds)
	addWords(b, questionStatuses)
	addWords(b, jobStatuses)
	addWords(b, permissionScopes)
	addWords(b, conversationModes)
	addWords(b, shellModes)
	for d, w := range decisionWords {
		b.put(d.Descriptor(), d.Number(), w)
	}
	return b
}()

// enumValue is a generated enum type.
type enumValue interface {
	~int32
	Descriptor() protoreflect.EnumDescriptor
	Number() protoreflect.EnumNumber
}

func addWords[E enumValue](b wordBook, words map[string]E) {
	for w, v := range words {
		b.put(v.Descriptor(), v.Number(), w)
	}
}

func (b wordBook) put(d protoreflect.EnumDescriptor, n protoreflect.EnumNumber, w string) {
	if b[d.FullName()] == nil {
		b[d.FullName()] = map[protoreflect.EnumNumber]string{}
	}
	b[d.FullName()][n] = w
}

// word is the CLI's word for an enum value: the word typed for it, else its name without the
// type's prefix in lower case (JOB_KIND_AGENT → "agent"); "" when unspecified.
func word(v protoreflect.Enum) string { return wordOf(v.Descriptor(), v.Number()) }

func wordOf(d protoreflect.EnumDescriptor, n protoreflect.EnumNumber) string {
	if w, ok := enumWords[d.FullName()][n]; ok {
		return w
	}
	if n == 0 {
		return ""
	}
	v := d.Values().ByNumber(n)
	if v == nil { // a value newer than this CLI
		return fmt.Sprint(n)
	}
	// buf's STANDARD lint gives every value the prefix of its zero value, X_UNSPECIFIED.
	prefix := strings.TrimSuffix(string(d.Values().ByNumber(0).Name()), "UNSPECIFIED")
	return strings.ToLower(strings.TrimPrefix(string(v.Name()), prefix))
}

// enumNamePattern matches what may be an enum value's name: upper-case words joined by _.
var enumNamePattern = regexp.MustCompile(`\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b`)

var operatorPackage = operatorv1.File_turncli_operator_v1_operator_proto.Package()

// reword replaces the operator API's enum value names in a message of the primary (written
// for every client of the API, so in the API's terms) with the CLI's words.
func reword(msg string) string {
	return enumNamePattern.ReplaceAllStringFunc(msg, func(name string) string {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(operatorPackage.Append(protoreflect.Name(name)))
		if v, ok := d.(protoreflect.EnumValueDescriptor); err == nil && ok && v.Number() != 0 {
			return wordOf(v.Parent().(protoreflect.EnumDescriptor), v.Number())
		}
		return name
	})
}
