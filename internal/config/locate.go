package config

import (
	"errors"
	"reflect"
	"strconv"

	"github.com/BurntSushi/toml"
)

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
