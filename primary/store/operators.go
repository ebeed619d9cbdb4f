package store

import (
	"context"
	"crypto/sha256"
	"errors"
	"time"

	"github.com/turncli/turncli/internal/fieldrule"
)

// Operators keeps the people who use the operator API. Only a SHA-256 digest of each
// operator's credential is stored, never the credential.
type Operators interface {
	// CreateOperator adds an operator. A name already taken is ErrExists.
	CreateOperator(ctx context.Context, o NewOperator) (Operator, error)
	// CreateFirstOperator adds o only when no operator exists, in one transaction; created is
	// false, and nothing is written, when one does.
	CreateFirstOperator(ctx context.Context, o NewOperator) (op Operator, created bool, err error)
	// ListOperators returns every operator, by name.
	ListOperators(ctx context.Context) ([]Operator, error)
	// RemoveOperator removes an operator by name; a name never created is ErrNotFound.
	RemoveOperator(ctx context.Context, name string) error
}

// OperatorChanges is implemented by a store that can tell whether operators may have been
// created or removed since an earlier look, by this process or another, without reading them:
// an authenticator keeps the operators in memory and reads them again only when the stamp
// changes, so an unknown credential never costs a read.
type OperatorChanges interface {
	// OperatorsStamp returns a value that changes whenever an operator is created or removed.
	OperatorsStamp() uint64
}

// ErrExists: the record to create already exists.
var ErrExists = errors.New("already exists")

// OperatorRole is an operator's role (contract: interaction controls).
type OperatorRole string

// The operator roles.
const (
	RoleMember OperatorRole = "member"
	RoleAdmin  OperatorRole = "admin"
)

// Valid reports whether r is one of the roles.
func (r OperatorRole) Valid() bool { return r == RoleMember || r == RoleAdmin }

// An operator's name is also how the people a response answers are matched to operators (a
// requester is an operator when its id is the operator's name), so chat ids such as
// "@alice:example.org" are valid names.
//
// ValidOperatorName reports whether name is 1..128 letters, digits, '.', '_', ':', '@', '=',
// '+' or '-', starting with a letter, digit or '@' (fieldrule.OperatorName).
func ValidOperatorName(name string) bool { return fieldrule.Valid(fieldrule.OperatorName, name) }

// NewOperator is an operator to create.
type NewOperator struct {
	// Name is unique; see ValidOperatorName.
	Name string
	Role OperatorRole
	// Digest is the SHA-256 digest of the operator's credential.
	Digest [sha256.Size]byte
}

// Operator is a stored operator.
type Operator struct {
	Name      string
	Role      OperatorRole
	Digest    [sha256.Size]byte
	CreatedAt time.Time
}
