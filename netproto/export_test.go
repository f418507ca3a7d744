package netproto

// UpgradeV0Net is upgradeV0Net for the tests: V0 layers to V1 layers only,
// as Caffe's NetUpgradeTest checks them.
var UpgradeV0Net = upgradeV0Net
