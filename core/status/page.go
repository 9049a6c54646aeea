// The status page's HTML template.

package status

// pageHTML is rendered by html/template, which escapes every value for the
// context it lands in (text, attribute), so names registered by brokers or
// typed into the form show as text. Row classes (broker, queue,
// route-broker) are what tests and scrapers find rows by.
const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
{{if and .Refresh (not .NoRefresh)}}<meta http-equiv="refresh" content="{{.Refresh}}">
{{end}}<title>rocketns status</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}
h1{font-size:1.4em}h2{font-size:1.2em;margin-top:1.5em}h3{font-size:1.05em}
table{border-collapse:collapse;margin:.4em 0 1em}
th,td{border:1px solid #ccc;padding:.2em .6em;text-align:left;white-space:nowrap}
th{background:#f2f2f2}
td.num{text-align:right}
tr.overdue td{background:#fde2e2}
tr.dead td{color:#888}
tr.wiped td{background:#fde2e2}
td.wiped{color:#b00020;font-weight:bold}
.notready{color:#b00020;font-weight:bold}
svg.chart{margin:0 .6em .6em 0;vertical-align:top}
.muted{color:#666}
code{background:#f2f2f2;padding:0 .2em}
</style>
</head>
<body>
<h1>rocketns status</h1>
<p class="muted">Generated {{.Generated}}{{if and .Refresh (not .NoRefresh)}}, refreshed every {{.Refresh}} s (<a href="?refresh=0">stop</a>){{end}}</p>
{{with .Process}}<table id="process">
<tr><th>Version</th><td id="version">{{.Version}}</td></tr>
<tr><th>Uptime</th><td id="uptime">{{if .Uptime}}{{.Uptime}}{{else}}not started{{end}}</td></tr>
<tr><th>Listening on</th><td id="listen">{{.Listen}}</td></tr>
<tr><th>Readiness</th><td id="readiness">{{if .Ready}}ready{{else}}<span class="notready">not ready: {{.NotReady}}</span>{{end}}</td></tr>
{{if .Start}}<tr><th>Started</th><td id="start">{{.Start}}</td></tr>
{{end}}</table>{{end}}
{{if .ControllerPath}}<p><a id="controller-link" href="{{.ControllerPath}}">Controller status</a>: the RocketMQ 5.x controller node running in this process (enableControllerInNamesrv).</p>
{{end}}<table id="summary">
<tr><th>Clusters</th><td class="num">{{.Stats.Clusters}}</td></tr>
<tr><th>Broker groups</th><td class="num">{{.Stats.BrokerGroups}}</td></tr>
<tr><th>Broker addresses</th><td class="num">{{.Stats.BrokerAddrs}}</td></tr>
<tr><th>Live brokers</th><td class="num">{{.Stats.LiveBrokers}}</td></tr>
<tr><th>Topics</th><td class="num" id="topic-count">{{.Stats.Topics}}</td></tr>
</table>
<p class="muted">Topics are counted, not listed: <code>nsadmin topicList</code> prints them.</p>
{{if .Chart}}
<h2>Last hour</h2>
<div id="chart">{{.Chart}}</div>
<p class="muted">Sampled every {{.ChartEvery}}: route queries and accepted registrations per second, and the route queries' 99th percentile latency in each interval.</p>
{{end}}
<h2>Clusters</h2>
<p class="muted">Last heartbeat counts registrations and heartbeats; a broker past its timeout shows as overdue until the next expiry scan removes it. Write is the group's write permission over its topics' queue data: a wiped group (wipeWritePerm, or a broker started read-only) takes no new messages.</p>
{{range .Clusters}}
<h3>Cluster {{.Name}}</h3>
<p class="muted">{{.Groups}} broker group{{if ne .Groups 1}}s{{end}}, {{len .Brokers}} address{{if ne (len .Brokers) 1}}es{{end}}</p>
<table class="brokers">
<tr><th>Broker group</th><th>ID</th><th>Address</th><th>Role</th><th>Last heartbeat</th><th>Timeout</th><th>HA address</th><th>Zone</th><th>Write</th></tr>
{{range .Brokers}}<tr class="broker{{if .Overdue}} overdue{{end}}{{if not .Live}} dead{{end}}{{if .Wiped}} wiped{{end}}"><td>{{.Group}}</td><td class="num">{{.ID}}</td><td>{{.Addr}}</td><td>{{.RoleText}}</td><td>{{.Age}}</td><td>{{.TimeoutText}}</td><td>{{.HAServerAddr}}</td><td>{{.Zone}}</td><td{{if .Wiped}} class="wiped"{{end}}>{{.WriteText}}</td></tr>
{{end}}</table>
{{else}}
<p id="no-brokers">No broker is registered.</p>
{{end}}
{{if .MoreBrokers}}<p id="more-brokers">{{.MoreBrokers}} more broker address{{if ne .MoreBrokers 1}}es{{end}} not shown: the page lists the first {{.MaxRows}}; <code>nsadmin clusterList</code> lists them all.</p>{{end}}

<h2>Topic route</h2>
<form method="get">
<label for="topic">Topic</label>
<input type="text" id="topic" name="topic" value="{{.Topic}}" size="40" maxlength="255" required>
<button type="submit">Show route</button>
</form>
{{if .Found}}{{with .Route}}
<h3>Route of <code>{{$.Topic}}</code></h3>
<table id="queues">
<tr><th>Broker group</th><th>Read queues</th><th>Write queues</th><th>Perm</th><th>Sys flag</th></tr>
{{range .Queues}}<tr class="queue"><td>{{.Group}}</td><td class="num">{{.Read}}</td><td class="num">{{.Write}}</td><td>{{.PermText}} ({{.Perm}})</td><td class="num">{{.SysFlag}}</td></tr>
{{end}}</table>
<table id="route-brokers">
<tr><th>Broker group</th><th>Cluster</th><th>Zone</th><th>ID</th><th>Address</th></tr>
{{range .Brokers}}<tr class="route-broker"><td>{{.Group}}</td><td>{{.Cluster}}</td><td>{{.Zone}}</td><td class="num">{{.ID}}</td><td>{{.Addr}}</td></tr>
{{end}}</table>
{{if .FilterServers}}<table id="filter-servers">
<tr><th>Broker address</th><th>Filter servers</th></tr>
{{range .FilterServers}}<tr class="filter-server"><td>{{.Addr}}</td><td>{{range $i, $s := .Servers}}{{if $i}}, {{end}}{{$s}}{{end}}</td></tr>
{{end}}</table>{{end}}
{{else}}
<p id="no-route">No route for topic <code>{{$.Topic}}</code>.</p>
{{end}}{{end}}
</body>
</html>
`
