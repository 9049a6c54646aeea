// decide_test.go is the tests' way into the leader's decisions: a request
// of any leader code parsed and decided as the controller port's code
// table (ctlserver) does, from its extFields and body.

package controller

import "github.com/rocketns/rocketns/codec"

// decide parses and decides a request with one of the codes the leader
// answers from the state; ok is false for any other code.
func (s *State) decide(code int32, f Fields, b []byte, env Env) (d Decision, ok bool) {
	if decide := leaderCodes[code]; decide != nil {
		return decide(s, f, b, env), true
	}
	return Decision{}, false
}

// leaderCodes are the leader's codes, each with its parser and decision.
var leaderCodes = map[int32]func(s *State, f Fields, b []byte, env Env) Decision{
	codec.ControllerAlterSyncStateSet: withBody(ParseAlterSyncStateSet, (*State).AlterSyncStateSet),
	codec.ControllerElectMaster:       fromHeader(ParseElectMaster, (*State).ElectMaster),
	codec.ControllerRegisterBroker:    fromHeader(ParseRegisterBroker, (*State).RegisterBroker),
	codec.ControllerGetReplicaInfo:    fromHeader(ParseGetReplicaInfo, (*State).GetReplicaInfo),
	codec.ControllerGetSyncStateData: withBody(func(_ Fields, b []byte) (GetSyncStateDataRequest, error) { return ParseGetSyncStateData(b) },
		(*State).GetSyncStateData),
	codec.CleanBrokerData:           fromHeader(ParseCleanBrokerData, (*State).CleanBrokerData),
	codec.ControllerGetNextBrokerID: fromHeader(ParseNextBrokerID, (*State).NextBrokerID),
	codec.ControllerApplyBrokerID:   fromHeader(ParseApplyBrokerID, (*State).ApplyBrokerID),
}

// fromHeader decides a request read from its extFields alone.
func fromHeader[R any](parse func(Fields) R, decide func(*State, R, Env) Decision) func(*State, Fields, []byte, Env) Decision {
	return func(s *State, f Fields, _ []byte, env Env) Decision { return decide(s, parse(f), env) }
}

// withBody decides a request with a body, or answers a body that does not
// decode as Java does, before the state is looked at.
func withBody[R any](parse func(Fields, []byte) (R, error), decide func(*State, R, Env) Decision) func(*State, Fields, []byte, Env) Decision {
	return func(s *State, f Fields, b []byte, env Env) Decision {
		req, err := parse(f, b)
		if err != nil {
			return Decision{Reply: BodyErrorReply(err)}
		}
		return decide(s, req, env)
	}
}
