// Controller admin requests, as mqadmin 5.3.x sends them: the metadata
// (1005), the SyncStateSets (1006), an admin election (1002), cleaning a
// broker set (1011), the node's config (1009, 1010), and a broker's epoch
// cache (1007, sent to the broker).

package client

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rocketns/rocketns/codec"
	"github.com/rocketns/rocketns/codec/body"
	"github.com/rocketns/rocketns/codec/properties"
)

// ControllerMetadata is the CONTROLLER_GET_METADATA_INFO (1005) answer of
// one controller node, from its own raft view.
type ControllerMetadata struct {
	Group      string
	LeaderID   string // "" when no leader is known
	LeaderAddr string // the leader's broker-facing address, "" when unknown
	IsLeader   bool   // the answering node leads
	// Peers is the peers field as sent: "id:addr;" per member.
	Peers string
}

// PeerList splits Peers as mqadmin does: each non-empty ';' piece.
func (m *ControllerMetadata) PeerList() []string {
	var out []string
	for _, p := range strings.Split(m.Peers, ";") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// ControllerMetadata sends 1005.
func (c *Client) ControllerMetadata(ctx context.Context) (*ControllerMetadata, error) {
	resp, err := c.call(ctx, &codec.Command{Code: codec.ControllerGetMetadataInfo, Version: codec.ServerVersion})
	if err != nil {
		return nil, fmt.Errorf("controller metadata: %w", err)
	}
	m := &ControllerMetadata{}
	m.Group, _ = resp.ExtValue("group")
	m.LeaderID, _ = resp.ExtValue("controllerLeaderId")
	m.LeaderAddr, _ = resp.ExtValue("controllerLeaderAddress")
	m.Peers, _ = resp.ExtValue("peers")
	v, _ := resp.ExtValue("isLeader")
	m.IsLeader = v == "true"
	return m, nil
}

// SyncStateData sends CONTROLLER_GET_SYNC_STATE_DATA (1006) for the named
// broker sets (a leader request) and returns the sets the controller
// knows, in its order.
func (c *Client) SyncStateData(ctx context.Context, brokerNames []string) ([]body.ReplicasInfo, error) {
	req := &codec.Command{Code: codec.ControllerGetSyncStateData, Version: codec.ServerVersion, Body: body.AppendBrokerNames(nil, brokerNames)}
	resp, err := c.call(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("sync state data: %w", err)
	}
	sets, err := body.DecodeBrokerReplicasInfo(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: sync state data: %w", c.addr, err)
	}
	return sets, nil
}

// ElectResult is a successful CONTROLLER_ELECT_MASTER answer.
type ElectResult struct {
	MasterID          int64
	MasterAddr        string
	MasterEpoch       int32
	SyncStateSetEpoch int32
	// Body is the decoded ElectMasterResponseBody (its member group may be
	// nil).
	Body *body.ElectMasterBody
}

// ElectMaster sends the admin's CONTROLLER_ELECT_MASTER (1002, a leader
// request): designateElect=true for brokerID of the set, as mqadmin
// electMaster does. Any answer but SUCCESS is an error (2011 included, as
// for mqadmin).
func (c *Client) ElectMaster(ctx context.Context, cluster, brokerName string, brokerID int64) (*ElectResult, error) {
	req := &codec.Command{Code: codec.ControllerElectMaster, Version: codec.ServerVersion}
	req.SetExt("clusterName", cluster)
	req.SetExt("brokerName", brokerName)
	req.SetExt("brokerId", strconv.FormatInt(brokerID, 10))
	req.SetExt("designateElect", "true")
	req.SetExt("invokeTime", strconv.FormatInt(time.Now().UnixMilli(), 10))
	resp, err := c.call(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("elect master of %s: %w", brokerName, err)
	}
	r := &ElectResult{}
	id, _ := resp.ExtValue("masterBrokerId")
	r.MasterID, _ = strconv.ParseInt(id, 10, 64)
	r.MasterAddr, _ = resp.ExtValue("masterAddress")
	r.MasterEpoch = extInt32(resp, "masterEpoch")
	r.SyncStateSetEpoch = extInt32(resp, "syncStateSetEpoch")
	if len(resp.Body) > 0 {
		if r.Body, err = body.DecodeElectMasterBody(resp.Body); err != nil {
			return nil, fmt.Errorf("%s: elect master of %s: %w", c.addr, brokerName, err)
		}
	}
	return r, nil
}

func extInt32(c *codec.Command, key string) int32 {
	v, _ := c.ExtValue(key)
	n, _ := strconv.ParseInt(v, 10, 32)
	return int32(n)
}

// CleanBrokerData sends CLEAN_BROKER_DATA (1011, a leader request): the
// ids of the set to clean (";"-separated; "" for the whole set), only
// brokers that are not alive unless cleanLiving.
func (c *Client) CleanBrokerData(ctx context.Context, cluster, brokerName, ids string, cleanLiving bool) error {
	req := &codec.Command{Code: codec.CleanBrokerData, Version: codec.ServerVersion}
	if cluster != "" {
		req.SetExt("clusterName", cluster)
	}
	req.SetExt("brokerName", brokerName)
	if ids != "" {
		req.SetExt("brokerControllerIdsToClean", ids)
	}
	req.SetExt("isCleanLivingBroker", strconv.FormatBool(cleanLiving))
	req.SetExt("invokeTime", strconv.FormatInt(time.Now().UnixMilli(), 10))
	if _, err := c.call(ctx, req); err != nil {
		return fmt.Errorf("clean broker data of %s: %w", brokerName, err)
	}
	return nil
}

// ControllerConfig sends GET_CONTROLLER_CONFIG (1010) and returns the body
// as sent and its entries as Properties.load reads them, in text order.
func (c *Client) ControllerConfig(ctx context.Context) (text string, pairs []properties.Property, err error) {
	resp, err := c.call(ctx, &codec.Command{Code: codec.GetControllerConfig, Version: codec.ServerVersion})
	if err != nil {
		return "", nil, fmt.Errorf("get controller config: %w", err)
	}
	if !utf8.Valid(resp.Body) {
		return "", nil, fmt.Errorf("%s: get controller config: body is not UTF-8", c.addr)
	}
	if pairs, err = properties.Parse(bytes.NewReader(resp.Body)); err != nil {
		return "", nil, fmt.Errorf("%s: get controller config: %w", c.addr, err)
	}
	return string(resp.Body), pairs, nil
}

// UpdateControllerConfig sends UPDATE_CONTROLLER_CONFIG (1009) with pairs
// as properties text. A black-listed key gets NO_PERMISSION (16).
func (c *Client) UpdateControllerConfig(ctx context.Context, pairs []properties.Property) error {
	req := &codec.Command{Code: codec.UpdateControllerConfig, Version: codec.ServerVersion, Body: properties.Append(nil, pairs)}
	if _, err := c.call(ctx, req); err != nil {
		return fmt.Errorf("update controller config: %w", err)
	}
	return nil
}

// BrokerEpochCache sends GET_BROKER_EPOCH_CACHE (1007) to a broker (not a
// controller): its epoch history.
func (c *Client) BrokerEpochCache(ctx context.Context) (*body.EpochEntryCache, error) {
	resp, err := c.call(ctx, &codec.Command{Code: codec.GetBrokerEpochCache, Version: codec.ServerVersion})
	if err != nil {
		return nil, fmt.Errorf("broker epoch cache: %w", err)
	}
	ec, err := body.DecodeEpochEntryCache(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: broker epoch cache: %w", c.addr, err)
	}
	return ec, nil
}
