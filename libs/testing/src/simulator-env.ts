/** The OS_* variables that point a stand-alone service at the Nova simulator's Keystone (`simUrl`), as its admin. */
export function simulatorCloudEnv(simUrl: string): Record<string, string> {
  return {
    OS_AUTH_URL: `${simUrl}/identity/v3`,
    OS_USERNAME: 'admin',
    OS_PASSWORD: 'admin',
    OS_PROJECT_NAME: 'admin',
    OS_USER_DOMAIN_NAME: 'Default',
    OS_PROJECT_DOMAIN_NAME: 'Default',
  };
}
