package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/courier-agent/courier/internal/human"
)

// LoadFile applies a courier.toml over c; a missing file is not an error.
// Every problem is reported, one a line, starting with the path and line
// ("courier.toml:7: ..."), and then nothing of the file is applied.
func (c *Config) LoadFile(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read settings: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return fmt.Errorf("read settings: %w", err)
	}
	if len(data) > maxFileSize {
		return fmt.Errorf("%s is larger than %d MB, the most a settings file may be", path, maxFileSize>>20)
	}
	return c.loadTOML(path, string(data))
}

func (c *Config) loadTOML(name, data string) error {
	if err := checkShape(name, data); err != nil {
		return err
	}
	var raw map[string]any
	md, err := toml.Decode(data, &raw)
	if err != nil {
		return fileSyntaxError(name, err)
	}
	text, next := &fileText{name: name, data: data}, c.clone()
	var errs []error
	var failed []toml.Key
	for _, key := range md.Keys() {
		// Keys inside a wrong one would only repeat its error.
		if slices.ContainsFunc(failed, func(k toml.Key) bool { return isUnder(key, k) }) {
			continue
		}
		if err := next.apply(raw, text, key); err != nil {
			failed = append(failed, key)
			if len(failed) <= maxFileErrors {
				errs = append(errs, fmt.Errorf("%s: %w", FileSource(name, locate(data, key)), err))
			}
		}
	}
	if more := len(failed) - maxFileErrors; more > 0 {
		errs = append(errs, fmt.Errorf("%s: %s", name, human.Count(more, "more problem", "")))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	*c = *next
	return nil
}

// maxFileErrors caps the problems reported of one file: past a few, it is
// likely no courier.toml at all, and each line costs a parse.
const maxFileErrors = 10

// apply sets the setting of one key of a file.
func (c *Config) apply(raw map[string]any, text *fileText, key toml.Key) error {
	name := key.String()
	val := lookup(raw, key)
	if slices.Contains(tableNames, name) {
		if _, ok := val.(map[string]any); !ok {
			return fmt.Errorf("%s: want a table like [%s], got %s", name, name, describe(val))
		}
		return nil
	}
	s, err := find(name, false)
	if err != nil {
		return err
	}
	if err := s.set(c, val); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	c.sources[s.key] = origin{file: text, key: key}
	return nil
}

func isUnder(key, parent toml.Key) bool {
	return len(key) > len(parent) && slices.Equal(key[:len(parent)], parent)
}

func lookup(raw map[string]any, key toml.Key) any {
	var v any = raw
	for _, part := range key {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[part]
	}
	return v
}

type syntaxError struct {
	where string
	err   toml.ParseError
}

func (e *syntaxError) Error() string {
	msg := strings.TrimSuffix(e.err.Message, ".")
	if len(msg) > 1 && msg[1] >= 'a' && msg[1] <= 'z' { // courier's messages start lowercase
		msg = strings.ToLower(msg[:1]) + msg[1:]
	}
	return e.where + ": " + msg
}

func (e *syntaxError) Unwrap() error { return e.err }

func fileSyntaxError(name string, err error) error {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", name, err)
	}
	where := name
	if p := pe.Position; p.Line > 0 {
		where = fmt.Sprintf("%s:%d", name, p.Line)
		if p.Col > 0 {
			where += fmt.Sprintf(":%d", p.Col)
		}
	}
	return &syntaxError{where: where, err: pe}
}

// The TOML package puts a key's line only in the ParseError of a value
// that fails to decode: locate decodes the file again into a struct
// holding just the wanted key, as a type that always fails, and reads the
// line from the error.

type stopHere struct{}

var errStopHere = errors.New("located")

func (stopHere) UnmarshalTOML(any) error { return errStopHere }

// locate returns the line of key in data, or 0 when it cannot tell.
func locate(data string, key toml.Key) int {
	t := reflect.TypeFor[stopHere]()
	for i := len(key) - 1; i >= 0; i-- {
		tag := reflect.StructTag("toml:" + strconv.Quote(key[i]))
		t = reflect.StructOf([]reflect.StructField{{Name: "K", Type: t, Tag: tag}})
	}
	_, err := toml.Decode(data, reflect.New(t).Interface())
	var pe toml.ParseError
	if errors.As(err, &pe) && pe.Message == errStopHere.Error() {
		return pe.Position.Line
	}
	return 0
}
