package utility

// ExpFast is expFast, for the tests.
var ExpFast = expFast
