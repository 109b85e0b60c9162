/**
 * A chat template that runs far past a server's --job-timeout (about 18 s on a 2-core machine)
 * within the default template limits (240,000 iterations of 1,000,000; range() within Jinja2's
 * MAX_RANGE; output empty): each iteration scans a 4 MB string. Tests of the job timeout use it;
 * a template that loops past the iteration limit is stopped by the engine first (E_TEMPLATE_LIMIT).
 */
export const SLOW_TEMPLATE =
  "{% set s = 'x' * 4000000 %}{% for i in range(240) %}{% for j in range(1000) %}{% if s.find('y') > 0 %}.{% endif %}{% endfor %}{% endfor %}";
