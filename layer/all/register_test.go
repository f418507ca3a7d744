package all_test

// The registry-wide tests build layers of every family by type name.
import _ "github.com/gocaffe/gocaffe/layer/all"
