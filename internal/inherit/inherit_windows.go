package inherit

// Seal does nothing on Windows: os/exec hands a program only the handles
// it names (its standard ones), whatever else courier holds open.
func Seal() {}
