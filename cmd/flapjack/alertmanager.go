package main

import (
	"context"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/api"
	"github.com/flapjackgo/flapjack/model/checkstate"
	"github.com/flapjackgo/flapjack/receiver/alertmanager"
)

// alertIntakes are POST /integrations/alertmanager and POST /api/v2/alerts, mapped by the
// receiver.alertmanager.* settings; their rejections are kept beside the executive's.
func (p *process) alertIntakes() ([]api.Intake, error) {
	m, err := alertmanager.MappingFrom(p.values)
	if err != nil {
		return nil, err
	}
	keeper := p.rejectKeeper()
	o := alertmanager.Options{Mapping: m, Publisher: p.publisher(), Keys: p.keys, Clock: p.clock,
		Log: p.log.With(zap.String("stage", httpStage)),
		Reject: func(ctx context.Context, source string, rejected []alertmanager.Rejection) error {
			batch := make([]checkstate.Rejected, len(rejected))
			for i, r := range rejected {
				batch[i] = checkstate.Rejected{Source: source, Input: r.Input, Reasons: r.Reasons}
			}
			return keeper.Write(ctx, batch)
		}}
	return []api.Intake{
		{Path: alertmanager.WebhookPath, What: "Alertmanager webhook (webhook_configs, payload version 4) or Grafana webhook contact point: each alert queued as an event", Handler: o.Webhook()},
		{Path: alertmanager.AlertsPath, What: "Alertmanager API v2 alert list, as Prometheus sends it (alerting: alertmanagers:): each alert queued as an event", Handler: o.Alerts()},
	}, nil
}
