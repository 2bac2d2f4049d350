package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
)

// A record file holds framed records: length, CRC-32C, payload. Records
// are appended; a last record cut short by a crash is dropped (it was
// never acknowledged), while damage before the end is an error, since
// dropping it would silently lose the records after it.

const frameHeader = 8

// maxRecord bounds one record, so a damaged length cannot make a reader
// allocate without limit.
const maxRecord = 1 << 30

// readRecords returns the payloads of the whole records of a file and
// the offset where whole records end.
func readRecords(path string) (payloads [][]byte, good int64, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", path, err)
	}
	off := 0
	for off < len(data) {
		if len(data)-off < frameHeader {
			break
		}
		n := int(binary.LittleEndian.Uint32(data[off:]))
		sum := binary.LittleEndian.Uint32(data[off+4:])
		if n > maxRecord {
			return nil, 0, fmt.Errorf("%s is damaged at byte %d", path, off)
		}
		end := off + frameHeader + n
		if end > len(data) {
			break
		}
		payload := data[off+frameHeader : end]
		if crc32.Checksum(payload, crcTable()) != sum {
			if end == len(data) {
				break // the last record, torn
			}
			return nil, 0, fmt.Errorf("%s is damaged at byte %d", path, off)
		}
		payloads = append(payloads, payload)
		off = end
	}
	return payloads, int64(off), nil
}

// recordFile is a record file open for appending.
type recordFile struct {
	f *os.File
}

// openRecords opens a record file for appending, cutting off a torn last
// record, and returns the records already there.
func openRecords(path string) (*recordFile, [][]byte, error) {
	payloads, good, err := readRecords(path)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("snapshot record: %w", err)
	}
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("snapshot record: %w", err)
	}
	if _, err := f.Seek(good, 0); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("snapshot record: %w", err)
	}
	return &recordFile{f: f}, payloads, nil
}

// append writes one record; with sync it is on disk when the call
// returns, together with every record appended before it.
func (r *recordFile) append(payload []byte, sync bool) error {
	if _, err := r.f.Write(frameRecord(payload)); err != nil {
		return fmt.Errorf("snapshot record: %w", err)
	}
	if sync {
		return r.sync()
	}
	return nil
}

// frameRecord returns a record as a record file holds it.
func frameRecord(payload []byte) []byte {
	frame := make([]byte, frameHeader, frameHeader+len(payload))
	binary.LittleEndian.PutUint32(frame, uint32(len(payload)))
	binary.LittleEndian.PutUint32(frame[4:], crc32.Checksum(payload, crcTable()))
	return append(frame, payload...)
}

func (r *recordFile) sync() error {
	if err := r.f.Sync(); err != nil {
		return fmt.Errorf("snapshot record: sync: %w", err)
	}
	return nil
}

func (r *recordFile) close() error {
	if r == nil || r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}

// step is one record of a turn: the paths a command changed (or, for a
// base step, what changed in the workspace outside any command and is
// not the turn's doing), with their states before and after.
type step struct {
	base    bool
	key     int
	changes []Change
	skipped []Skipped
}

const (
	stepBase    = 'b'
	stepCommand = 'c'
)

func encodeStep(st step) []byte {
	var buf []byte
	kind := byte(stepCommand)
	if st.base {
		kind = stepBase
	}
	buf = append(buf, kind)
	buf = binary.AppendVarint(buf, int64(st.key))
	buf = binary.AppendUvarint(buf, uint64(len(st.changes)))
	for _, c := range st.changes {
		var has byte
		if c.Before != nil {
			has |= 1
		}
		if c.After != nil {
			has |= 2
		}
		buf = append(buf, has)
		if c.Before != nil {
			buf = appendEntry(buf, c.Before, "")
		}
		if c.After != nil {
			buf = appendEntry(buf, c.After, "")
		}
	}
	buf = binary.AppendUvarint(buf, uint64(len(st.skipped)))
	for _, s := range st.skipped {
		buf = appendString(buf, s.Path)
		buf = appendString(buf, s.Reason)
	}
	return buf
}

func decodeStep(payload []byte) (step, error) {
	d := decoder{buf: payload}
	var st step
	kind := d.bytes(1)
	if d.err != nil || (kind[0] != stepBase && kind[0] != stepCommand) {
		return st, errors.New("damaged step record")
	}
	st.base = kind[0] == stepBase
	st.key = int(d.varint())
	n := d.uvarint()
	if n > uint64(len(payload)) {
		return st, errors.New("damaged step record")
	}
	st.changes = make([]Change, n)
	for i := range st.changes {
		has := d.bytes(1)
		if d.err != nil {
			break
		}
		c := &st.changes[i]
		if has[0]&1 != 0 {
			e := d.entry()
			c.Before = &e
			c.Path = e.Path
		}
		if has[0]&2 != 0 {
			e := d.entry()
			c.After = &e
			c.Path = e.Path
		}
	}
	n = d.uvarint()
	if n > uint64(len(payload)) {
		return st, errors.New("damaged step record")
	}
	for range n {
		st.skipped = append(st.skipped, Skipped{Path: d.string(), Reason: d.string()})
	}
	if d.err != nil || len(d.buf) != 0 {
		return st, errors.New("damaged step record")
	}
	return st, nil
}

// readSteps reads a turn's records.
func readSteps(path string) ([]step, error) {
	payloads, _, err := readRecords(path)
	if err != nil {
		return nil, err
	}
	return decodeSteps(path, payloads)
}

func decodeSteps(path string, payloads [][]byte) ([]step, error) {
	steps := make([]step, 0, len(payloads))
	for i, p := range payloads {
		st, err := decodeStep(p)
		if err != nil {
			return nil, fmt.Errorf("%s record %d: %w", path, i+1, err)
		}
		steps = append(steps, st)
	}
	return steps, nil
}

func appendString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

func (d *decoder) string() string { return string(d.bytes(d.uvarint())) }
