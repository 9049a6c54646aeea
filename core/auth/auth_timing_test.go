// Benchmarks of the checks on the request path.

package auth

import (
	"strconv"
	"testing"
	"time"
)

func BenchmarkCheckOpenCode(b *testing.B) {
	p, _ := New(Options{Signatures: true, Accounts: testAccounts})
	req := signed(105, "", "", "", "topic", "TopicTest")
	b.ReportAllocs()
	for b.Loop() {
		if p.Check(ClassOpen, req, "10.0.0.1:40000") != nil {
			b.Fatal("refused")
		}
	}
}

func BenchmarkCheckSignedAdmin(b *testing.B) {
	nets, _ := ParseCIDRs("10.0.0.0/8")
	p, _ := New(Options{Signatures: true, Accounts: testAccounts, AllowFrom: nets})
	req := signed(100, "admin-key", "admin-secret", "", "namespace", "ORDER_TOPIC_CONFIG", "key", "TopicTest", "value", "broker-a:4")
	b.ReportAllocs()
	for b.Loop() {
		if p.Check(ClassAdmin, req, "10.0.0.1:40000") != nil {
			b.Fatal("refused")
		}
	}
}

func BenchmarkCheckStrictAdmin(b *testing.B) {
	p, _ := New(Options{Signatures: true, Accounts: testAccounts})
	now := time.Now()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		// A new nonce each time, as clients send: the replay cache grows
		// and is pruned as in service.
		req := signed(100, "", "", "", "namespace", "ORDER_TOPIC_CONFIG", "key", "TopicTest", "value", "broker-a:4")
		SignStrict(req, "admin-key", "admin-secret", now, strconv.Itoa(i))
		i++
		if p.Check(ClassAdmin, req, "10.0.0.1:40000") != nil {
			b.Fatal("refused")
		}
	}
}

func BenchmarkCheckBrokerReportFromNetwork(b *testing.B) {
	nets, _ := ParseCIDRs("10.0.0.0/8")
	p, _ := New(Options{Signatures: true, Accounts: testAccounts, BrokerAllowFrom: nets})
	req := signed(322, "", "", "{}", "brokerName", "broker-a", "brokerAddr", "10.0.0.1:10911", "clusterName", "c1", "brokerId", "0")
	b.ReportAllocs()
	for b.Loop() {
		if p.Check(ClassBrokerReport, req, "10.0.0.1:40000") != nil {
			b.Fatal("refused")
		}
	}
}
