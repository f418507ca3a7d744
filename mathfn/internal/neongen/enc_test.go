package main

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The WORDs the generator writes hold to their comments: GNU objdump
// (binutils-aarch64-linux-gnu, which CI installs) disassembles every
// encoded instruction of every generated file to the text of its comment.
// A wrong bit in an encoding would otherwise show only as wrong numbers
// on an arm64 CPU, or as a different instruction that happens to pass.
func TestEncodingsMatchObjdump(t *testing.T) {
	objdump, err := exec.LookPath("aarch64-linux-gnu-objdump")
	if err != nil {
		t.Skip("no aarch64-linux-gnu-objdump (Debian's binutils-aarch64-linux-gnu)")
	}
	var words []uint32
	var texts []string
	line := regexp.MustCompile(`WORD \$0x([0-9a-f]{8}) // (.*)`)
	for _, write := range []func(*asm){gemmFile, elementwiseFile, rowsFile, vecFile} {
		var w asm
		write(&w)
		for _, m := range line.FindAllStringSubmatch(w.String(), -1) {
			var word uint32
			for _, c := range m[1] {
				word = word<<4 | uint32(strings.IndexRune("0123456789abcdef", c))
			}
			words = append(words, word)
			texts = append(texts, m[2])
		}
	}
	if len(words) == 0 {
		t.Fatal("the generator wrote no WORDs")
	}
	bin := make([]byte, 4*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint32(bin[4*i:], w)
	}
	path := filepath.Join(t.TempDir(), "words.bin")
	if err := os.WriteFile(path, bin, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(objdump, "-D", "-b", "binary", "-m", "aarch64", path).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", objdump, err, out)
	}
	// "   4:\t4ea0e804 \tfcmlt\tv4.4s, v0.4s, #0.0": the address, the word,
	// the instruction.
	dis := regexp.MustCompile(`(?m)^\s*([0-9a-f]+):\s+([0-9a-f]{8})\s+(.*)$`)
	got := dis.FindAllStringSubmatch(string(out), -1)
	if len(got) != len(words) {
		t.Fatalf("objdump decoded %d instructions of %d", len(got), len(words))
	}
	space := regexp.MustCompile(`\s+`)
	for i, g := range got {
		have := space.ReplaceAllString(strings.TrimSpace(g[3]), " ")
		if have != texts[i] {
			t.Errorf("WORD $0x%08x: objdump reads %q, the comment says %q", words[i], have, texts[i])
		}
	}
}
