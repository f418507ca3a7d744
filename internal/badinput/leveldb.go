package badinput

import (
	"fmt"
	"os"
	"path/filepath"
)

// FlipJournalBit flips one bit in the middle of a LevelDB database's
// journal (its .log file), as a bad disk or a bad copy would: the block
// holding it fails its checksum.
func FlipJournalBit(dir string) error {
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(logs) != 1 {
		return fmt.Errorf("%s: want one journal, found %v (%v)", dir, logs, err)
	}
	b, err := os.ReadFile(logs[0])
	if err != nil {
		return err
	}
	if len(b) == 0 {
		return fmt.Errorf("%s is empty", logs[0])
	}
	b[len(b)/2] ^= 0x10
	return os.WriteFile(logs[0], b, 0o644)
}
