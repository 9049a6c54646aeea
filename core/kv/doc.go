// Package kv is the NameServer's namespaced key/value store (PUT/GET/DELETE
// _KV_CONFIG, GET_KVLIST_BY_NAMESPACE), persisted in Java's kvConfig.json.
package kv
