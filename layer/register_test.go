package layer_test

// The layer types of the family packages, registered for this package's
// tests, which build layers by type name.
import _ "github.com/gocaffe/gocaffe/layer/all"
