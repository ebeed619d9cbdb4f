package matrixtest

import "testing"

func TestRegistrationMAC(t *testing.T) {
	// The wanted values are openssl's, computed apart from this code:
	//   printf 'n0nce\0alice\0alice-matrixtest-password\0notadmin' | openssl dgst -sha1 -hmac turncli-matrixtest-shared-secret
	for _, tc := range []struct {
		name, user, password string
		admin                bool
		want                 string
	}{
		{"UserIsNotAdmin", "alice", "alice-matrixtest-password", false, "84178e3631a3b32d682bbba3cc0eb1bf907eb339"},
		{"AdminIsSigned", "root", "rootpassword", true, "b813dd5d6900bde72e3555b86bc0afd941d6f16b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := registrationMAC("n0nce", tc.user, tc.password, tc.admin); got != tc.want {
				t.Fatalf("registrationMAC = %s, want %s", got, tc.want)
			}
		})
	}
}
