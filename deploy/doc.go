// Package deploy checks the deployment files as data: the Dockerfile, the
// Kubernetes manifests and the systemd unit must agree with each other and
// with the NameServer's settings (ports, paths, users, probes), and the
// Grafana dashboard and Prometheus rules must select series a real scrape
// has. It holds only tests, and builds and runs the image where a Docker
// engine answers.
package deploy
