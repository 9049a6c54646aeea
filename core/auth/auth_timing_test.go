// Benchmarks of the checks on the request path.
package auth

import "testing"

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
