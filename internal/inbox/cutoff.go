package inbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"time"
)

// blockTags are the reply commands that have a body and a closing tag.
var blockTags = [][]byte{[]byte("CREATE_FILE"), []byte("EDIT_FILE"), []byte("RUN_COMMAND"), []byte("MESSAGE"), []byte("DONE")}

// maxCutOffScan bounds how much of a file looksCutOff reads; a larger
// reply counts as cut off and waits to settle.
const maxCutOffScan = 64 << 20

// CutOffWait is how long a reply that stops mid-line in an open block
// waits from its last change: a save in several goes looks so between
// its pieces.
const CutOffWait = 5 * time.Second

// cutOff is how a reply ends: in an open block, without a newline.
type cutOff struct {
	open, midLine bool
}

// openMidLine is the surest sign of a write that has not finished.
func (c cutOff) openMidLine() bool { return c.open && c.midLine }

// looksCutOff reports how a reply ends: a reply the chat cut off looks
// like a save under way, and then waiting costs little.
func looksCutOff(path string) (cutOff, error) {
	f, err := os.Open(path)
	if err != nil {
		return cutOff{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return cutOff{}, err
	}
	var c cutOff
	if size := info.Size(); size > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, size-1); err != nil {
			return cutOff{}, err
		}
		c.midLine = last[0] != '\n'
	}
	if info.Size() > maxCutOffScan {
		c.open = true
		return c, nil
	}
	c.open, err = openBlockAtEnd(f)
	return c, err
}

// openBlockAtEnd reports whether a block is open at a reply's end, tags
// matched as the parser finds them (line start, after blanks, any case).
// A reply without tags may be JSON: open when it ends in a code fence or,
// bare, inside its object.
func openBlockAtEnd(f *os.File) (bool, error) {
	var open, tagged, fenced, bare bool
	first := true
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4<<10), maxCutOffScan)
	for sc.Scan() {
		line := bytes.TrimLeft(sc.Bytes(), " \t")
		if first && len(line) > 0 {
			first = false
			bare = line[0] == '{'
		}
		if bytes.HasPrefix(line, []byte("```")) {
			fenced = !fenced
		}
		if len(line) < 2 || line[0] != '[' {
			continue
		}
		name, closing := bytes.CutPrefix(line[1:], []byte("/"))
		for _, t := range blockTags {
			if len(name) >= len(t) && bytes.EqualFold(name[:len(t)], t) && (len(name) == len(t) || name[len(t)] == ']' || name[len(t)] == ' ') {
				open, tagged = !closing, true
			}
		}
	}
	if err := sc.Err(); err != nil || tagged || fenced || !bare {
		return open || (!tagged && fenced), err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return false, err
	}
	return errors.Is(json.NewDecoder(f).Decode(new(json.RawMessage)), io.ErrUnexpectedEOF), nil
}
