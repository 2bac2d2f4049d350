package inbox

import (
	"bufio"
	"bytes"
	"io"
	"os"
)

// blockTags are the reply commands that have a body and a closing tag.
var blockTags = [][]byte{[]byte("CREATE_FILE"), []byte("EDIT_FILE"), []byte("RUN_COMMAND"), []byte("MESSAGE"), []byte("DONE")}

// maxCutOffScan bounds how much of a file looksCutOff reads; a larger
// reply counts as cut off and waits to settle, as every reply used to.
const maxCutOffScan = 64 << 20

// looksCutOff reports whether a reply looks like a write still under way:
// its last command block is open (an opening tag with no closing tag after
// it). That is how a save in several goes looks between them, whether or
// not a piece ends with a newline; a reply the chat itself cut off looks
// the same, and then waiting the settle time costs little.
func looksCutOff(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return false, err
	}
	if info.Size() > maxCutOffScan {
		return true, nil
	}
	return openBlockAtEnd(f)
}

// openBlockAtEnd reads a reply line by line and reports whether a block
// is open at its end. Tags are matched as the parser finds them: at the
// start of a line, after blanks, in any case.
func openBlockAtEnd(r io.Reader) (bool, error) {
	open := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4<<10), maxCutOffScan)
	for sc.Scan() {
		line := bytes.TrimLeft(sc.Bytes(), " \t")
		if len(line) < 2 || line[0] != '[' {
			continue
		}
		name, closing := bytes.CutPrefix(line[1:], []byte("/"))
		for _, t := range blockTags {
			if len(name) >= len(t) && bytes.EqualFold(name[:len(t)], t) && (len(name) == len(t) || name[len(t)] == ']' || name[len(t)] == ' ') {
				open = !closing
			}
		}
	}
	return open, sc.Err()
}
