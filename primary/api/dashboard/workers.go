package dashboard

import (
	operatorv1 "github.com/turncli/turncli/gen/turncli/operator/v1"
)

// The Workers view: the connected workers by key, with capacity, the commands they run and
// the background jobs running on them.

// workerKey is one key's connected workers and their totals.
type workerKey struct {
	Key               string
	Workers           []*operatorv1.ConnectedWorker
	Capacity, Running uint32
	// Unlimited is set when a worker of the key declared no capacity.
	Unlimited bool
}

type workersData struct{ Keys []workerKey }

func (s *Server) loadWorkers(q *request) (workersData, error) {
	resp, err := s.op.ListWorkers(q.ctx, &operatorv1.ListWorkersRequest{PageSize: 1000})
	if err != nil {
		return workersData{}, err
	}
	var d workersData
	for _, w := range resp.GetWorkers() { // in key order
		if len(d.Keys) == 0 || d.Keys[len(d.Keys)-1].Key != w.GetWorkerKey() {
			d.Keys = append(d.Keys, workerKey{Key: w.GetWorkerKey()})
		}
		k := &d.Keys[len(d.Keys)-1]
		k.Workers = append(k.Workers, w)
		k.Capacity += w.GetCapacity()
		k.Running += w.GetRunningCommands()
		k.Unlimited = k.Unlimited || w.GetCapacity() == 0
	}
	return d, nil
}
