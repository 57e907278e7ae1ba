import { describeSecretsScenario } from '../support/secrets.scenario';

// Secrets never reach a log line, a stored row, a published message or an error body (issue 12).
describeSecretsScenario('embedded');
