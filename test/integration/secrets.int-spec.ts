import { describeSecretsScenario } from '../support/secrets.scenario';

// The secrets scenario on RabbitMQ + PostgreSQL: the AMQP URL's password joins the secrets.
describeSecretsScenario('rabbitmq+postgres');
