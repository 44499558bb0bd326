package session

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/deadletter/deadletter/internal/opfile"
	"github.com/deadletter/deadletter/internal/textfmt"
)

// ReadConnectionStringFile reads a connection string from a file: its one line, without the trailing newline an
// editor or `echo` leaves. The error never quotes the contents.
func ReadConnectionStringFile(path string) (string, error) {
	b, err := opfile.ReadOperatorFile("--connection-string-file", path)
	var pe *fs.PathError
	switch {
	case errors.As(err, &pe):
		return "", fmt.Errorf("--connection-string-file: %w", err)
	case err != nil:
		return "", err
	}
	cs := strings.TrimSpace(string(b))
	switch {
	case cs == "":
		return "", Inputf("--connection-string-file %s is empty: want the connection string (AccountName=…;AccountKey=… or BlobEndpoint=…;SharedAccessSignature=…)", textfmt.Printable(path))
	case strings.ContainsAny(cs, "\r\n"):
		return "", Inputf("--connection-string-file %s holds more than one line: want the connection string alone (its contents are not repeated here)", textfmt.Printable(path))
	}
	return cs, nil
}
