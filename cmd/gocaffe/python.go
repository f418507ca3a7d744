package main

// In a build with the python tag, the command embeds a Python interpreter
// and runs the Python layers of the nets it trains (docs/python.md);
// without the tag the package is empty and such a layer is an error.
import _ "github.com/gocaffe/gocaffe/pycaffe/embed"
