// Package body holds the JSON bodies of NameServer requests and responses:
// their Go shapes, the two output dialects (fastjson's legacy form with bare
// integer map keys, and standard JSON) and a lenient reader for what brokers
// send.
package body
