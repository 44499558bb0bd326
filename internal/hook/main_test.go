package hook

import (
	"os"
	"testing"

	"github.com/deadletter/deadletter/internal/testkit"
)

// TestMain fails the run if a hook a test ran left a process behind (a setsid child, a double fork).
func TestMain(m *testing.M) { os.Exit(testkit.Clean(m)) }
