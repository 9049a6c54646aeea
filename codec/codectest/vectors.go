// vectors.go loads the .jsonl recordings, and the properties texts in them.

package codectest

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// Frame is one recorded frame (one line of a .jsonl file).
type Frame struct {
	File          string          `json:"-"`
	Conn          int             `json:"conn"`
	Dir           string          `json:"dir"` // "req" (towards the NameServer) or "resp"
	Seq           int             `json:"seq"`
	FrameB64      string          `json:"frame_b64"`
	Header        json.RawMessage `json:"header"`
	SerializeType int             `json:"serializeType"`
	HeaderLen     int             `json:"header_len"`
	BodyLen       int             `json:"body_len"`
	BodyEnc       string          `json:"body_enc"`
	Body          string          `json:"body"`
}

// Raw returns the whole frame as sent, including its 4-byte length prefix.
func (f *Frame) Raw() []byte {
	b, err := base64.StdEncoding.DecodeString(f.FrameB64)
	if err != nil {
		panic(fmt.Sprintf("%s conn %d seq %d: bad frame_b64: %v", f.File, f.Conn, f.Seq, err))
	}
	return b
}

// Dir is the absolute path of the vectors directory.
func Dir() string {
	return RepoPath("codec", "testdata", "vectors")
}

// Files lists the .jsonl files, sorted by name.
func Files() ([]string, error) {
	m, err := filepath.Glob(filepath.Join(Dir(), "*.jsonl"))
	sort.Strings(m)
	return m, err
}

// Load reads one file's frames in recorded order.
func Load(path string) ([]Frame, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Frame
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var fr Frame
		if err := json.Unmarshal(sc.Bytes(), &fr); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		fr.File = filepath.Base(path)
		out = append(out, fr)
	}
	return out, sc.Err()
}

// RecordingOrder is the order in which the files were recorded (each one
// continues the NameServer state the previous left), per the vectors README.
var RecordingOrder = []string{
	"raw-00-empty-namesrv.jsonl",
	"broker-a-master-register-startup-and-periodic.jsonl",
	"broker-b-master-register-startup.jsonl",
	"broker-a-slave-register-startup.jsonl",
	"mqadmin-clusterList.jsonl",
	"mqadmin-topicRoute-existing-TBW102.jsonl",
	"mqadmin-topicRoute-missing.jsonl",
	"mqadmin-topicList.jsonl",
	"mqadmin-updateTopic-cluster.jsonl",
	"mqadmin-topicRoute-CorpusTopic-after-create.jsonl",
	"mqadmin-updateOrderConf-put.jsonl",
	"mqadmin-updateOrderConf-get.jsonl",
	"mqadmin-updateNamesrvConfig-orderMessageEnable-true-then-topicRoute.jsonl",
	"mqadmin-updateNamesrvConfig-harmless-orderMessageEnable-false.jsonl",
	"mqadmin-updateOrderConf-delete.jsonl",
	"mqadmin-updateOrderConf-get-after-delete.jsonl",
	"mqadmin-updateKvConfig.jsonl",
	"mqadmin-getNamesrvConfig.jsonl",
	"mqadmin-updateNamesrvConfig-blacklisted-kvConfigPath.jsonl",
	"mqadmin-wipeWritePerm-broker-a-then-topicRoute.jsonl",
	"mqadmin-addWritePerm-broker-a-then-topicRoute.jsonl",
	"raw-01-route-versions-and-json-dialects.jsonl",
	"raw-03-misc-codes-322-219-224-304-311-312-313.jsonl",
	"raw-04-oneway-and-response-flag.jsonl",
	"raw-05-binary-ROCKETMQ-serialization.jsonl",
	"raw-12-unit-topic-lists-311-312-313-with-fake-broker.jsonl",
	"broker5-master-slave-to-4.9.8-ns-oneway-322-heartbeats.jsonl",
	"broker5-master-slave-to-4.9.8-ns-904-heartbeats.jsonl",
}

// PropertiesTexts returns the properties texts of the recorded exchanges:
// UPDATE_NAMESRV_CONFIG (318) request bodies and GET_NAMESRV_CONFIG (319)
// response bodies, plus the spec's and Java's odd forms: the seeds of the
// fuzz targets that read that format.
func PropertiesTexts() ([][]byte, error) {
	files, err := Files()
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no vectors under %s: %v", Dir(), err)
	}
	type key struct {
		file         string
		conn, opaque int
	}
	asked := map[key]int{}
	var out [][]byte
	for _, file := range files {
		frames, err := Load(file)
		if err != nil {
			return nil, err
		}
		for _, fr := range frames {
			var h struct {
				Code   int `json:"code"`
				Opaque int `json:"opaque"`
			}
			if err := json.Unmarshal(fr.Header, &h); err != nil {
				return nil, fmt.Errorf("%s seq %d: %w", fr.File, fr.Seq, err)
			}
			raw := fr.Raw()
			if len(raw) < 8+fr.HeaderLen {
				return nil, fmt.Errorf("%s seq %d: frame shorter than its header", fr.File, fr.Seq)
			}
			body := raw[8+fr.HeaderLen:]
			k := key{fr.File, fr.Conn, h.Opaque}
			switch {
			case fr.Dir == "req":
				asked[k] = h.Code
				if h.Code == 318 && len(body) > 0 {
					out = append(out, body)
				}
			case asked[k] == 319 && len(body) > 0:
				out = append(out, body)
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no properties bodies in the vectors")
	}
	return append(out,
		[]byte("# comment\n! comment\nlistenPort = 9876\nkey\\ with\\ spaces:value\\\n    continued\n"),
		[]byte("a=\\u00e9\\ud83d\\ude00\\ud800x\r\nb\tc\fd\r\\\n"),
		[]byte("orderMessageEnable=TRUE\nwaitSecondsForService=-1\nkvConfigPath=  \n"),
		[]byte("k=\\u12"),
		[]byte("x\\"),
	), nil
}
