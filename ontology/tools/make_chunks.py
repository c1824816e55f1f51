"""Writes ontology/data/chunks.jsonl: the bundled sample chunks (pt-BR, sample content).

Run: python ontology/tools/make_chunks.py (data only, no Django).
"""

import json
import pathlib
from collections import Counter

# fmt: off

SCHEMA = "ontologia_v2_2026.05"
OUT = pathlib.Path(__file__).resolve().parents[1] / "data" / "chunks.jsonl"
rows = []

def c(chunk_id, classe, subclasse, texto, *, praticas=(), processos=(), estruturas=(), sintomas=(),
      ramo, bioma=("cerrado",), cultura=("soja", "milho"), escala="talhao",
      estagio=("transicao_inicial", "transicao_intermediaria"), tipo="revisao_tecnica", conf=0.8,
      fonte, validacao="comite_curadoria_gaas_2025q1", ano=2024, origem="propria"):
    rows.append({
        "chunk_id": chunk_id, "texto": " ".join(texto.split()),
        **{
            "classe_ontologica": classe, "subclasse": subclasse,
            "praticas_associadas": list(praticas), "processos_afetados": list(processos),
            "estruturas_fortalecidas": list(estruturas), "sintomas_aplicaveis": list(sintomas),
            "ramo_taxonomia": ramo, "bioma": list(bioma), "cultura": list(cultura), "escala": escala,
            "estagio_transicao": list(estagio), "tipo_evidencia": tipo, "confiabilidade": conf,
            "fonte": fonte, "validacao": validacao, "ano": ano, "origem_funcional": origem,
            "versao_schema": SCHEMA,
        },
    })

ALL_STAGES = ("convencional", "transicao_inicial", "transicao_intermediaria", "transicao_avancada", "regenerativo")
ANY = ("*",)

# ---------------- agroecossistema
c("ctx_cerrado_solos", "agroecossistema", "bioma", """
O Cerrado tem solos profundos, muito intemperizados e ácidos, com alumínio tóxico em
subsuperfície e baixa capacidade de troca. A estação seca de cinco a seis meses e os veranicos
em janeiro tornam a cobertura permanente do solo e o enraizamento profundo decisivos para a
soja e o milho safrinha. Ver [[ctx_cerrado_clima]].""",
  processos=["retencao_agua", "ciclagem"], estruturas=["sistema_radicular", "palhada"],
  ramo="contexto/territorio/cerrado", cultura=ANY, estagio=ALL_STAGES, escala="paisagem",
  fonte="Embrapa_Cerrados_sintese_solos_2019", ano=2019)
c("ctx_cerrado_clima", "agroecossistema", "clima", """
No Cerrado a chuva se concentra de outubro a abril e o veranico de duas a três semanas é comum
no meio da safra. A janela para a safrinha de milho e para plantas de cobertura depois da soja é
curta: semear o mix logo após a colheita aproveita a umidade residual.""",
  processos=["retencao_agua"], estruturas=["cobertura_viva"], sintomas=["estresse_hidrico"],
  ramo="contexto/territorio/cerrado", estagio=ALL_STAGES, escala="paisagem",
  fonte="INMET_normais_climatologicas_1991_2020", ano=2022)
c("ctx_mata_atlantica", "agroecossistema", "bioma", """
Nas áreas agrícolas da Mata Atlântica o relevo ondulado e as chuvas intensas de verão fazem da
erosão o principal risco. Terraços, plantio em nível e cobertura contínua são a base de qualquer
transição regenerativa nesses talhões declivosos.""",
  praticas=["terraceamento", "plantas_cobertura"], processos=["infiltracao"], estruturas=["cobertura_viva"],
  sintomas=["erosao"], ramo="contexto/territorio/mata_atlantica", bioma=["mata_atlantica"], cultura=ANY,
  estagio=ALL_STAGES, escala="paisagem", fonte="SOSMA_atlas_uso_solo_2021", ano=2021)
c("ctx_pampa", "agroecossistema", "bioma", """
No Pampa a soja avança sobre campos nativos e solos rasos sobre arenito. A perda de cobertura no
inverno e o pisoteio em áreas de integração expõem o solo; azevém e aveia como cobertura de
inverno protegem a estrutura superficial.""",
  praticas=["plantas_cobertura", "integracao_lavoura_pecuaria"], processos=["agregacao"],
  estruturas=["cobertura_viva"], ramo="contexto/territorio/pampa", bioma=["pampa"], cultura=["soja", "milho", "trigo"],
  estagio=ALL_STAGES, escala="paisagem", fonte="UFRGS_campos_sulinos_2020", ano=2020)

# ---------------- sistema produtivo
c("sis_soja_milho_safrinha", "sistema_produtivo", "graos", """
A sucessão soja e milho safrinha domina o Cerrado. Sem uma terceira espécie o sistema acumula
pouca palhada, seleciona nematoides e deixa o solo exposto na seca. Inserir braquiária consorciada
ao milho ou um mix de cobertura é o primeiro passo para diversificar raízes.""",
  praticas=["rotacao_culturas", "plantas_cobertura", "mix_cobertura"], processos=["ciclagem", "agregacao"],
  estruturas=["palhada", "sistema_radicular"], sintomas=["galhas_raizes", "baixa_materia_organica"],
  ramo="contexto/sistemas_producao/graos", estagio=ALL_STAGES, escala="propriedade",
  fonte="Embrapa_sistemas_producao_graos_2021", ano=2021)
c("sis_ilp", "sistema_produtivo", "integracao", """
Na integração lavoura-pecuária a braquiária semeada com o milho vira pasto na seca e palhada
para a soja seguinte. O gado em lotação ajustada recicla nutrientes; em excesso, compacta a
camada superficial. Ver [[pra_integracao_lavoura_pecuaria]].""",
  praticas=["integracao_lavoura_pecuaria", "plantas_cobertura"], processos=["ciclagem", "agregacao"],
  estruturas=["palhada", "sistema_radicular"], sintomas=["compactacao"],
  ramo="contexto/sistemas_producao/integracao", cultura=["soja", "milho", "braquiaria"], escala="propriedade",
  fonte="Rede_ILPF_boletim_2022", ano=2022)
c("sis_cafe_cerrado", "sistema_produtivo", "perenes", """
No café do Cerrado Mineiro a entrelinha coberta com braquiária roçada lança palhada sob a saia
do cafeeiro, reduz a temperatura do solo e melhora a infiltração nas chuvas intensas.""",
  praticas=["plantas_cobertura"], processos=["infiltracao", "retencao_agua"], estruturas=["cobertura_viva", "palhada"],
  ramo="contexto/sistemas_producao/perenes", cultura=["cafe"], escala="propriedade",
  fonte="EPAMIG_cafe_entrelinha_2023", ano=2023)

# ---------------- estágio de transição
c("tra_inicial", "estagio_transicao", "transicao_inicial", """
Nos dois primeiros anos de transição a biologia do solo ainda responde pouco: a palhada é escassa,
a fixação biológica oscila e a produtividade pode cair levemente. É a fase de corrigir o perfil,
inocular bem e estabelecer a primeira cobertura diversificada.""",
  praticas=["inoculacao", "plantas_cobertura", "calagem"], processos=["fixacao_biologica_n", "ciclagem"],
  estruturas=["microbiota_solo", "palhada"], sintomas=["baixa_nodulacao", "baixa_atividade_biologica"],
  ramo="manejo/transicao/fases", estagio=["transicao_inicial"],
  fonte="GAAS_guia_transicao_2025", ano=2025, tipo="protocolo_gaas", conf=0.85)
c("tra_intermediaria", "estagio_transicao", "transicao_intermediaria", """
Entre o terceiro e o quinto ano a palhada se acumula, a agregação melhora e o uso de adubo
nitrogenado e de defensivos pode ser reduzido com segurança, acompanhando indicadores de campo.""",
  praticas=["plantio_direto", "mix_cobertura", "bioinsumos"], processos=["agregacao", "ciclagem"],
  estruturas=["agregados_estaveis", "materia_organica_estavel"], ramo="manejo/transicao/fases",
  estagio=["transicao_intermediaria"], fonte="GAAS_guia_transicao_2025", ano=2025, tipo="protocolo_gaas", conf=0.85)
c("tra_avancada", "estagio_transicao", "transicao_avancada", """
Na transição avançada o sistema se sustenta em processos: cobertura viva o ano todo, raízes
diversas e fixação biológica plena. O foco passa a ser ajuste fino e monitoramento.""",
  praticas=["mix_cobertura", "rotacao_culturas"], processos=["ciclagem", "sequestro_carbono"],
  estruturas=["cobertura_viva", "biodiversidade_funcional"], ramo="manejo/transicao/fases",
  estagio=["transicao_avancada", "regenerativo"], fonte="GAAS_guia_transicao_2025", ano=2025, tipo="protocolo_gaas", conf=0.85)

# ---------------- perfil do produtor
c("per_agricultura_familiar", "perfil_produtor", "agricultura_familiar", """
Para a agricultura familiar as recomendações precisam caber em poucos hectares, com sementes
próprias de adubos verdes, bioinsumos produzidos na propriedade e mão de obra da família.""",
  praticas=["plantas_cobertura", "bioinsumos"], ramo="contexto/perfil/escala", bioma=ANY, cultura=ANY,
  estagio=ALL_STAGES, escala="propriedade", fonte="GAAS_guia_agricultura_familiar_2024")
c("per_grande_produtor", "perfil_produtor", "grande_produtor", """
Em grandes áreas a transição costuma começar por talhões piloto, comparando faixas com e sem mix
de cobertura antes de escalar. Sem assistência técnica, o risco de erros caros aumenta.""",
  praticas=["mix_cobertura"], ramo="contexto/perfil/escala", bioma=ANY, cultura=["soja", "milho", "algodao"],
  estagio=ALL_STAGES, escala="propriedade", fonte="GAAS_relatorio_adocao_2024")

# ---------------- sintomas
c("sin_baixa_nodulacao", "sintoma", "planta", """
Baixa nodulação na soja: ao arrancar plantas no estádio V4 a R1 encontram-se menos de 15 nódulos
por planta, nódulos pequenos ou brancos por dentro. A planta mostra verde-claro e a fixação
biológica de nitrogênio fica comprometida. Comum no segundo ano de soja em áreas de transição.""",
  processos=["fixacao_biologica_n"], estruturas=["microbiota_solo", "sistema_radicular"],
  sintomas=["baixa_nodulacao"], ramo="diagnostico/sintomas_planta", cultura=["soja"],
  fonte="Embrapa_Soja_circular_nodulacao_2020", ano=2020, tipo="revisao_tecnica", conf=0.9)
c("sin_compactacao", "sintoma", "solo", """
Compactação: raízes tortas ou achatadas na horizontal a 10 a 20 cm, resistência ao penetrômetro
acima de 2 MPa, água empoçando após chuvas e plantas que murcham cedo no veranico.""",
  processos=["infiltracao", "agregacao"], estruturas=["porosidade_funcional", "sistema_radicular"],
  sintomas=["compactacao", "baixa_infiltracao", "estresse_hidrico"], ramo="diagnostico/sintomas_solo",
  fonte="GAAS_protocolo_diagnostico_solo_2025", ano=2025, tipo="protocolo_gaas", conf=0.9)
c("sin_erosao_sulcos", "sintoma", "solo", """
Erosão em sulcos: após chuvas fortes aparecem valetas que o preparo não apaga, com perda de solo
da camada fértil. Sulcos que se aprofundam viram voçorocas e exigem intervenção urgente.""",
  processos=["infiltracao"], estruturas=["cobertura_viva", "porosidade_funcional"],
  sintomas=["erosao", "erosao_em_sulcos", "vocoroca"], ramo="diagnostico/sintomas_solo",
  bioma=["cerrado", "mata_atlantica"], cultura=ANY, fonte="GAAS_protocolo_diagnostico_solo_2025", ano=2025,
  tipo="protocolo_gaas", conf=0.9)
c("sin_amarelecimento", "sintoma", "planta", """
Amarelecimento das folhas em soja e milho: se começa nas folhas velhas sugere falta de nitrogênio
ou potássio; se nas novas, enxofre ou micronutrientes; em reboleiras, nematoides ou encharcamento.
A cor e o padrão das folhas orientam a investigação.""",
  processos=["ciclagem", "fixacao_biologica_n"], estruturas=["fertilidade_quimica", "sistema_radicular"],
  sintomas=["amarelecimento_folhas"], ramo="diagnostico/sintomas_planta",
  fonte="Embrapa_guia_deficiencias_2019", ano=2019, conf=0.85)
c("sin_encrostamento", "sintoma", "solo", """
Encrostamento superficial: uma crosta fina se forma após chuva em solo descoberto, dificulta a
emergência e faz a água escorrer. É sinal de agregados instáveis e falta de palhada.""",
  processos=["infiltracao", "agregacao"], estruturas=["agregados_estaveis", "palhada"],
  sintomas=["encrostamento", "baixa_infiltracao"], ramo="diagnostico/sintomas_solo",
  fonte="GAAS_protocolo_diagnostico_solo_2025", ano=2025, tipo="protocolo_gaas")
c("sin_baixa_atividade", "sintoma", "biologico", """
Baixa atividade biológica: palhada que não se decompõe, ausência de minhocas e de hifas visíveis,
cheiro fraco de terra. Indica microbiota empobrecida por solo descoberto e pouca diversidade.""",
  processos=["decomposicao", "ciclagem"], estruturas=["microbiota_solo"],
  sintomas=["baixa_atividade_biologica", "baixa_materia_organica"], ramo="diagnostico/sintomas_solo",
  cultura=ANY, fonte="GAAS_protocolo_diagnostico_solo_2025", ano=2025, tipo="protocolo_gaas")

# ---------------- causas prováveis
c("cau_inoculacao_ineficiente", "causa_provavel", "biologica", """
Inoculação ineficiente é a causa mais frequente de baixa nodulação na soja no segundo ano de
cultivo em áreas de transição: população de bradirrizóbio ainda baixa no solo, inoculante
aplicado horas antes do plantio ao sol ou misturado a fungicidas no tratamento de sementes.""",
  praticas=["inoculacao", "coinoculacao"], processos=["fixacao_biologica_n"], estruturas=["microbiota_solo"],
  sintomas=["baixa_nodulacao"], ramo="diagnostico/causas/biologicas", cultura=["soja"],
  fonte="Embrapa_Soja_circular_nodulacao_2020", ano=2020, conf=0.9)
c("cau_acidez_aluminio", "causa_provavel", "quimica", """
Acidez e alumínio tóxico em subsuperfície limitam o crescimento radicular e a sobrevivência do
bradirrizóbio; a nodulação da soja cai e as raízes ficam rasas, sensíveis ao veranico.""",
  praticas=["calagem", "gessagem"], processos=["acidificacao", "fixacao_biologica_n"],
  estruturas=["fertilidade_quimica", "sistema_radicular"], sintomas=["baixa_nodulacao", "estresse_hidrico"],
  ramo="diagnostico/causas/quimicas", fonte="Embrapa_Cerrados_correcao_solo_2018", ano=2018, conf=0.85)
c("cau_compactacao_subsuperficial", "causa_provavel", "fisica", """
Compactação subsuperficial por tráfego de máquinas em solo úmido restringe raízes e aeração;
raízes confinadas formam menos nódulos e a água não infiltra.""",
  praticas=["plantas_cobertura", "mix_cobertura"], processos=["agregacao", "infiltracao"],
  estruturas=["porosidade_funcional", "sistema_radicular"], sintomas=["compactacao", "baixa_infiltracao", "baixa_nodulacao"],
  ramo="diagnostico/causas/fisicas", fonte="GAAS_protocolo_diagnostico_solo_2025", ano=2025, tipo="protocolo_gaas")
c("cau_excesso_n_mineral", "causa_provavel", "manejo", """
Adubação nitrogenada mineral na semeadura da soja inibe a formação de nódulos: com nitrogênio
disponível a planta não investe na simbiose.""",
  praticas=["inoculacao"], processos=["fixacao_biologica_n"], estruturas=["microbiota_solo"],
  sintomas=["baixa_nodulacao"], ramo="diagnostico/causas/manejo", cultura=["soja"],
  fonte="Hungria_Mendes_revisao_FBN_2015", ano=2015, tipo="artigo_cientifico", conf=0.9)
c("cau_solo_descoberto", "causa_provavel", "manejo", """
Solo descoberto na entressafra expõe a superfície ao impacto da chuva e ao calor, desfaz agregados,
forma crosta e reduz a microbiota. É causa comum de encrostamento, erosão e baixa infiltração.""",
  praticas=["plantas_cobertura", "plantio_direto"], processos=["agregacao", "infiltracao", "decomposicao"],
  estruturas=["cobertura_viva", "palhada", "agregados_estaveis"],
  sintomas=["encrostamento", "erosao", "baixa_infiltracao", "baixa_atividade_biologica"],
  ramo="diagnostico/causas/manejo", cultura=ANY, fonte="GAAS_protocolo_diagnostico_solo_2025", ano=2025, tipo="protocolo_gaas")
c("cau_deficiencia_nitrogenio", "causa_provavel", "quimica", """
Deficiência de nitrogênio no milho: amarelecimento em V a partir da ponta das folhas velhas,
comum após palhada de gramínea sem leguminosa no mix, que imobiliza nitrogênio.""",
  praticas=["mix_cobertura", "rotacao_culturas"], processos=["ciclagem", "decomposicao"],
  estruturas=["fertilidade_quimica"], sintomas=["amarelecimento_folhas"], ramo="diagnostico/causas/quimicas",
  cultura=["milho"], fonte="Embrapa_guia_deficiencias_2019", ano=2019)
c("cau_deficiencia_enxofre", "causa_provavel", "quimica", """
Deficiência de enxofre: folhas novas amareladas de modo uniforme, frequente em solos arenosos do
Cerrado com baixa matéria orgânica e adubações sem fonte de enxofre.""",
  praticas=["gessagem"], processos=["ciclagem"], estruturas=["fertilidade_quimica", "materia_organica_estavel"],
  sintomas=["amarelecimento_folhas"], ramo="diagnostico/causas/quimicas",
  fonte="Embrapa_guia_deficiencias_2019", ano=2019)
c("cau_encharcamento", "causa_provavel", "fisica", """
Encharcamento temporário após chuvas seguidas deixa folhas amareladas em reboleiras nas partes
baixas do talhão, por falta de oxigênio nas raízes.""",
  praticas=["plantas_cobertura"], processos=["infiltracao"], estruturas=["porosidade_funcional"],
  sintomas=["amarelecimento_folhas", "baixa_infiltracao"], ramo="diagnostico/causas/fisicas",
  fonte="GAAS_protocolo_diagnostico_solo_2025", ano=2025, tipo="protocolo_gaas")
c("cau_nematoides", "causa_provavel", "biologica", """
Nematoides de galha e das lesões em sucessão soja e milho causam reboleiras de plantas amareladas
e raízes com galhas; a monocultura de hospedeiros multiplica a população.""",
  praticas=["rotacao_culturas", "mix_cobertura", "bioinsumos"], processos=["supressao_biologica"],
  estruturas=["biodiversidade_funcional", "sistema_radicular"], sintomas=["galhas_raizes", "amarelecimento_folhas"],
  ramo="diagnostico/causas/biologicas", fonte="Embrapa_nematoides_soja_2021", ano=2021, conf=0.85)

# ---------------- processos
c("pro_fixacao_biologica", "processo", "biologico", """
Fixação biológica de nitrogênio: o bradirrizóbio nos nódulos da soja converte nitrogênio do ar em
amônio, suprindo toda a demanda da cultura quando a simbiose funciona. Depende de raízes sadias,
microbiota ativa, pH adequado e molibdênio.""",
  praticas=["inoculacao", "coinoculacao"], processos=["fixacao_biologica_n"],
  estruturas=["microbiota_solo", "sistema_radicular", "fertilidade_quimica"], sintomas=["baixa_nodulacao"],
  ramo="processos_ecologicos/ciclo_nutrientes/fixacao_biologica", cultura=["soja", "feijao"],
  fonte="Hungria_Mendes_revisao_FBN_2015", ano=2015, tipo="artigo_cientifico", conf=0.92)
c("pro_agregacao", "processo", "fisico", """
Agregação: raízes, hifas de fungos e exsudatos colam partículas em agregados estáveis que criam
porosidade funcional. Sem raízes vivas o ano todo a agregação regride.""",
  praticas=["plantas_cobertura", "plantio_direto", "mix_cobertura"], processos=["agregacao"],
  estruturas=["agregados_estaveis", "porosidade_funcional", "microbiota_solo"], sintomas=["compactacao", "encrostamento"],
  ramo="processos_ecologicos/estrutura/agregacao", cultura=ANY, fonte="Six_et_al_agregacao_2004", ano=2004,
  tipo="artigo_cientifico", conf=0.9)
c("pro_infiltracao", "processo", "hidrico", """
Infiltração: a água entra pelo sistema de poros contínuos deixados por raízes e fauna. Cobertura
protege os poros superficiais; compactação e crosta a reduzem e geram enxurrada.""",
  praticas=["plantas_cobertura", "plantio_direto", "terraceamento"], processos=["infiltracao", "retencao_agua"],
  estruturas=["porosidade_funcional", "cobertura_viva"], sintomas=["baixa_infiltracao", "erosao", "compactacao"],
  ramo="processos_ecologicos/ciclo_agua/infiltracao", cultura=ANY, fonte="GAAS_protocolo_diagnostico_solo_2025",
  ano=2025, tipo="protocolo_gaas")
c("pro_ciclagem", "processo", "biologico", """
Ciclagem de nutrientes: raízes profundas buscam nutrientes lixiviados e a decomposição da palhada
os devolve à superfície. Mix com gramíneas e leguminosas equilibra a relação carbono e nitrogênio.""",
  praticas=["mix_cobertura", "plantas_cobertura", "rotacao_culturas"], processos=["ciclagem", "decomposicao"],
  estruturas=["palhada", "sistema_radicular", "microbiota_solo"], sintomas=["amarelecimento_folhas", "baixa_materia_organica"],
  ramo="processos_ecologicos/ciclo_nutrientes/ciclagem", cultura=ANY, fonte="Embrapa_ciclagem_cerrado_2017", ano=2017)
c("pro_acidificacao", "processo", "quimico", """
Acidificação: a lixiviação de bases e a adubação nitrogenada amoniacal baixam o pH; no Cerrado o
alumínio trocável sobe em profundidade e trava raízes e nodulação.""",
  praticas=["calagem", "gessagem"], processos=["acidificacao"], estruturas=["fertilidade_quimica", "sistema_radicular"],
  sintomas=["baixa_nodulacao"], ramo="processos_ecologicos/ciclo_nutrientes/acidez",
  fonte="Embrapa_Cerrados_correcao_solo_2018", ano=2018)
c("pro_decomposicao", "processo", "biologico", """
Decomposição da palhada: fungos e bactérias transformam resíduos em matéria orgânica estável;
sem diversidade de resíduos e com solo descoberto a decomposição é lenta ou rápida demais.""",
  praticas=["mix_cobertura", "bioinsumos"], processos=["decomposicao", "sequestro_carbono"],
  estruturas=["microbiota_solo", "materia_organica_estavel"], sintomas=["baixa_atividade_biologica"],
  ramo="processos_ecologicos/ciclo_carbono/decomposicao", cultura=ANY, fonte="Embrapa_ciclagem_cerrado_2017", ano=2017)

# ---------------- estruturas
c("est_microbiota", "estrutura", "biologica", """
Microbiota do solo: comunidade de bactérias, fungos micorrízicos e fauna que sustenta a fixação
biológica, a decomposição e a agregação. Cresce com raízes vivas diversas e palhada contínua.""",
  praticas=["mix_cobertura", "bioinsumos", "inoculacao"], processos=["fixacao_biologica_n", "decomposicao", "agregacao"],
  estruturas=["microbiota_solo"], ramo="estruturas_fundamentais/estrutura_solo/estrutura_biologica", cultura=ANY,
  fonte="Embrapa_bioanalise_solo_2020", ano=2020, conf=0.85)
c("est_sistema_radicular", "estrutura", "biologica", """
Sistema radicular profundo: raízes que atravessam o perfil abrem bioporos, acessam água no
veranico e são o sítio dos nódulos. Braquiária e nabo forrageiro ajudam a formar esses canais.""",
  praticas=["mix_cobertura", "plantas_cobertura", "gessagem"], processos=["fixacao_biologica_n", "infiltracao", "ciclagem"],
  estruturas=["sistema_radicular"], ramo="estruturas_fundamentais/estrutura_solo/estrutura_biologica",
  fonte="GAAS_guia_transicao_2025", ano=2025, tipo="protocolo_gaas")
c("est_porosidade", "estrutura", "fisica", """
Porosidade funcional: rede de macroporos contínuos que conduz água e ar. É construída por raízes
e fauna e destruída por tráfego em solo úmido e revolvimento.""",
  praticas=["plantas_cobertura", "plantio_direto"], processos=["infiltracao", "agregacao"],
  estruturas=["porosidade_funcional"], ramo="estruturas_fundamentais/estrutura_solo/estrutura_fisica", cultura=ANY,
  fonte="GAAS_protocolo_diagnostico_solo_2025", ano=2025, tipo="protocolo_gaas")
c("est_cobertura_palhada", "estrutura", "fisica", """
Cobertura viva e palhada: protegem o solo do impacto da chuva e do calor, alimentam a microbiota e
mantêm a umidade. A meta regenerativa é solo coberto em mais de 80 por cento do ano.""",
  praticas=["plantas_cobertura", "mix_cobertura", "plantio_direto"], processos=["infiltracao", "decomposicao"],
  estruturas=["cobertura_viva", "palhada"], ramo="estruturas_fundamentais/estrutura_solo/estrutura_fisica", cultura=ANY,
  fonte="GAAS_guia_transicao_2025", ano=2025, tipo="protocolo_gaas")
c("est_fertilidade_perfil", "estrutura", "quimica", """
Fertilidade química do perfil: saturação por bases adequada e pouco alumínio até 40 cm permitem
raízes profundas e nodulação plena. Construída com calagem e gessagem bem calculadas.""",
  praticas=["calagem", "gessagem"], processos=["acidificacao", "fixacao_biologica_n"],
  estruturas=["fertilidade_quimica"], ramo="estruturas_fundamentais/estrutura_solo/estrutura_quimica",
  fonte="Embrapa_Cerrados_correcao_solo_2018", ano=2018)

# ---------------- intervenções (alta criticidade)
c("gaas_2025_0473_p12", "intervencao", "estrutural", """
Descompactação biológica com plantio direto e plantas de cobertura de raízes agressivas
(braquiária, nabo forrageiro, crotalária): em dois ciclos a porosidade funcional e a infiltração
se recuperam sem escarificação mecânica. Ver [[pra_mix_cobertura]].""",
  praticas=["plantio_direto", "plantas_cobertura"], processos=["agregacao", "infiltracao", "ciclagem"],
  estruturas=["porosidade_funcional", "cobertura_viva"], sintomas=["compactacao", "baixa_infiltracao", "erosao"],
  ramo="estruturas_fundamentais/estrutura_solo/estrutura_fisica", estagio=["transicao_inicial", "transicao_intermediaria"],
  tipo="caso_validado_gaas", conf=0.87, fonte="GAAS_relato_produtor_MG_2024", ano=2024)
c("int_reinoculacao", "intervencao", "biologica", """
Reinoculação anual da soja com bradirrizóbio no sulco ou na semente à sombra, semeando no mesmo
dia, recompõe a população de rizóbios e a fixação biológica nas áreas de segundo e terceiro ano.
Ver [[dos_inoculante_soja]] e [[con_inoculante_fungicida]].""",
  praticas=["inoculacao", "coinoculacao"], processos=["fixacao_biologica_n"], estruturas=["microbiota_solo", "sistema_radicular"],
  sintomas=["baixa_nodulacao"], ramo="processos_ecologicos/ciclo_nutrientes/fixacao_biologica", cultura=["soja"],
  fonte="Embrapa_Soja_circular_nodulacao_2020", ano=2020, conf=0.9)
c("int_correcao_perfil", "intervencao", "quimica_corretiva", """
Correção do perfil com calagem incorporada antes da transição e gessagem para levar cálcio e
reduzir alumínio em profundidade, liberando raízes e nodulação. Ver [[dos_calcario_saturacao]].""",
  praticas=["calagem", "gessagem"], processos=["acidificacao", "fixacao_biologica_n"],
  estruturas=["fertilidade_quimica", "sistema_radicular"], sintomas=["baixa_nodulacao", "estresse_hidrico"],
  ramo="estruturas_fundamentais/estrutura_solo/estrutura_quimica", estagio=["convencional", "transicao_inicial"],
  fonte="Embrapa_Cerrados_correcao_solo_2018", ano=2018)
c("int_suspensao_n_semeadura", "intervencao", "manejo", """
Suspender o nitrogênio mineral na semeadura da soja e confiar na fixação biológica bem inoculada
restabelece a nodulação já na safra seguinte.""",
  praticas=["inoculacao"], processos=["fixacao_biologica_n"], estruturas=["microbiota_solo"],
  sintomas=["baixa_nodulacao"], ramo="processos_ecologicos/ciclo_nutrientes/fixacao_biologica", cultura=["soja"],
  fonte="Hungria_Mendes_revisao_FBN_2015", ano=2015, tipo="artigo_cientifico", conf=0.88)
c("int_terracos_cobertura", "intervencao", "estrutural", """
Contenção de erosão em sulcos: refazer terraços e canais escoadouros, semear cobertura densa nas
linhas de enxurrada e não trafegar nas áreas com sulcos até estabilizar.""",
  praticas=["terraceamento", "plantas_cobertura"], processos=["infiltracao"], estruturas=["cobertura_viva", "porosidade_funcional"],
  sintomas=["erosao", "erosao_em_sulcos", "vocoroca"], ramo="manejo/praticas_conservacionistas",
  bioma=["cerrado", "mata_atlantica"], cultura=ANY, fonte="GAAS_protocolo_erosao_2025", ano=2025, tipo="protocolo_gaas")
c("int_diversificar_raizes", "intervencao", "biologica", """
Diversificar raízes com mix de cobertura de três ou mais famílias após a soja aumenta a microbiota,
a agregação e a ciclagem, e reduz nematoides em dois a três ciclos.""",
  praticas=["mix_cobertura", "rotacao_culturas"], processos=["ciclagem", "agregacao", "supressao_biologica"],
  estruturas=["microbiota_solo", "sistema_radicular", "biodiversidade_funcional"],
  sintomas=["galhas_raizes", "baixa_atividade_biologica", "baixa_nodulacao"], ramo="manejo/praticas_conservacionistas",
  fonte="GAAS_guia_transicao_2025", ano=2025, tipo="protocolo_gaas")

# ---------------- práticas
c("pra_inoculacao", "pratica", "biologica", """
Inoculação de rotina: usar inoculante registrado dentro da validade, guardado à sombra, aplicado
no dia do plantio; coinocular com Azospirillum quando a área ainda tem pouca matéria orgânica.""",
  praticas=["inoculacao", "coinoculacao"], processos=["fixacao_biologica_n"], estruturas=["microbiota_solo"],
  ramo="manejo/praticas_biologicas/inoculacao", cultura=["soja", "feijao"], fonte="Embrapa_Soja_circular_nodulacao_2020",
  ano=2020, conf=0.9)
c("pra_mix_cobertura", "pratica", "conservacionista", """
Mix de plantas de cobertura: braquiária, milheto, crotalária e nabo forrageiro semeados logo após a
soja combinam raízes fasciculadas e pivotantes, fixação biológica e palhada duradoura.""",
  praticas=["mix_cobertura", "plantas_cobertura"], processos=["agregacao", "ciclagem", "fixacao_biologica_n"],
  estruturas=["cobertura_viva", "sistema_radicular", "microbiota_solo", "porosidade_funcional"],
  ramo="manejo/praticas_conservacionistas/cobertura", fonte="GAAS_guia_transicao_2025", ano=2025, tipo="protocolo_gaas")
c("pra_plantio_direto", "pratica", "conservacionista", """
Plantio direto de qualidade: sem revolvimento, com palhada permanente e rotação. Sem cobertura e
rotação vira apenas semeadura sem preparo e perde os benefícios.""",
  praticas=["plantio_direto", "rotacao_culturas"], processos=["agregacao", "infiltracao"],
  estruturas=["palhada", "porosidade_funcional"], ramo="manejo/praticas_conservacionistas/plantio_direto", cultura=ANY,
  fonte="FEBRAPDP_principios_2020", ano=2020)
c("pra_rotacao", "pratica", "conservacionista", """
Rotação de culturas: alternar soja com milho, feijão ou algodão e inserir gramíneas forrageiras
quebra ciclos de pragas e nematoides e diversifica a microbiota.""",
  praticas=["rotacao_culturas"], processos=["supressao_biologica", "ciclagem"],
  estruturas=["biodiversidade_funcional", "microbiota_solo"], ramo="manejo/praticas_conservacionistas/rotacao",
  cultura=["soja", "milho", "feijao", "algodao"], fonte="Embrapa_sistemas_producao_graos_2021", ano=2021)
c("pra_integracao_lavoura_pecuaria", "pratica", "integracao", """
Integração lavoura-pecuária: braquiária consorciada ao milho safrinha, pastejo na seca com altura de
entrada e saída definidas e retirada do gado a tempo de formar palhada para a soja.""",
  praticas=["integracao_lavoura_pecuaria", "plantas_cobertura"], processos=["ciclagem", "agregacao"],
  estruturas=["palhada", "sistema_radicular"], ramo="manejo/praticas_integracao/ilp",
  cultura=["soja", "milho", "braquiaria"], fonte="Rede_ILPF_boletim_2022", ano=2022)
c("pra_bioinsumos_on_farm", "pratica", "biologica", """
Bioinsumos produzidos na fazenda (Bacillus, Trichoderma) aplicados no sulco ajudam a suprimir
patógenos e nematoides, desde que com controle de qualidade e registro.""",
  praticas=["bioinsumos"], processos=["supressao_biologica", "decomposicao"], estruturas=["microbiota_solo"],
  ramo="manejo/praticas_biologicas/bioinsumos", fonte="Embrapa_bioinsumos_on_farm_2022", ano=2022, conf=0.75)

# ---------------- indicadores
c("ind_nodulos", "indicador", "campo", """
Contagem de nódulos: arrancar 10 plantas com pá no estádio R1, lavar as raízes e contar; acima de
20 nódulos por planta com interior rosado indica fixação biológica ativa. Nódulo branco ou verde
não fixa.""",
  praticas=["inoculacao"], processos=["fixacao_biologica_n"], estruturas=["microbiota_solo", "sistema_radicular"],
  sintomas=["baixa_nodulacao"], ramo="monitoramento/indicadores_campo", cultura=["soja"],
  fonte="Embrapa_Soja_circular_nodulacao_2020", ano=2020, conf=0.9)
c("ind_infiltracao_anel", "indicador", "campo", """
Teste de infiltração com anel: cravar um cano de 15 cm, despejar 444 mL de água e cronometrar; mais
de 10 minutos indica infiltração restrita. Repetir nas mesmas épocas para acompanhar.""",
  praticas=["plantas_cobertura"], processos=["infiltracao"], estruturas=["porosidade_funcional"],
  sintomas=["baixa_infiltracao", "compactacao"], ramo="monitoramento/indicadores_campo", cultura=ANY,
  fonte="USDA_NRCS_soil_quality_kit_2001", ano=2001, tipo="protocolo_gaas", conf=0.85)
c("ind_penetrometro_vess", "indicador", "campo", """
Resistência à penetração e avaliação visual da estrutura (VESS): penetrômetro acima de 2 MPa ou
torrões angulosos e raízes achatadas indicam compactação; acompanhar a cada safra.""",
  praticas=["plantas_cobertura", "mix_cobertura"], processos=["agregacao"], estruturas=["porosidade_funcional", "agregados_estaveis"],
  sintomas=["compactacao"], ramo="monitoramento/indicadores_campo", cultura=ANY,
  fonte="Ball_et_al_VESS_2007", ano=2007, tipo="artigo_cientifico", conf=0.85)
c("ind_materia_organica_respiracao", "indicador", "laboratorio", """
Matéria orgânica e bioanálise (atividade enzimática beta-glicosidase e arilsulfatase): subir a
cada ano indica microbiota e ciclagem em recuperação. Amostrar sempre na mesma época.""",
  processos=["ciclagem", "decomposicao", "sequestro_carbono", "fixacao_biologica_n"],
  estruturas=["microbiota_solo", "materia_organica_estavel"], sintomas=["baixa_atividade_biologica", "baixa_materia_organica"],
  ramo="monitoramento/indicadores_laboratorio", cultura=ANY, fonte="Embrapa_bioanalise_solo_2020", ano=2020, conf=0.88)
c("ind_cobertura_percentual", "indicador", "campo", """
Percentual de cobertura do solo: contar pontos cobertos em uma corda de 20 metros com marcas a
cada 20 cm; meta acima de 80 por cento na entressafra.""",
  praticas=["plantas_cobertura", "mix_cobertura"], processos=["infiltracao", "decomposicao"],
  estruturas=["cobertura_viva", "palhada"], sintomas=["erosao", "encrostamento"],
  ramo="monitoramento/indicadores_campo", cultura=ANY, fonte="GAAS_protocolo_monitoramento_2025", ano=2025,
  tipo="protocolo_gaas")
c("ind_estabilidade_agregados", "indicador", "campo", """
Teste do copo (slake): um torrão seco em água que se desfaz em segundos indica agregados instáveis;
torrão íntegro após cinco minutos indica boa agregação biológica.""",
  processos=["agregacao"], estruturas=["agregados_estaveis", "microbiota_solo"], sintomas=["encrostamento", "compactacao"],
  ramo="monitoramento/indicadores_campo", cultura=ANY, fonte="GAAS_protocolo_monitoramento_2025", ano=2025,
  tipo="protocolo_gaas")

# ---------------- dosagens (alta criticidade)
c("dos_inoculante_soja", "dosagem", "biologico", """
Dose de inoculante para soja: no mínimo 1,2 milhão de células de bradirrizóbio por semente; em
áreas de segundo ano ou solo arenoso, dobrar a dose ou aplicar no sulco com 2,5 vezes a dose.""",
  praticas=["inoculacao"], processos=["fixacao_biologica_n"], estruturas=["microbiota_solo"],
  sintomas=["baixa_nodulacao"], ramo="processos_ecologicos/ciclo_nutrientes/fixacao_biologica", cultura=["soja"],
  fonte="Embrapa_Soja_circular_nodulacao_2020", ano=2020, conf=0.9)
c("dos_calcario_saturacao", "dosagem", "corretivo", """
Necessidade de calcário pelo método da saturação por bases: NC (t/ha) = (V2 - V1) x CTC / PRNT,
com V2 de 60 por cento para soja no Cerrado. Gesso: 50 x teor de argila (kg/ha) quando há alumínio
em subsuperfície.""",
  praticas=["calagem", "gessagem"], processos=["acidificacao"], estruturas=["fertilidade_quimica"],
  sintomas=["baixa_nodulacao"], ramo="estruturas_fundamentais/estrutura_solo/estrutura_quimica",
  fonte="Embrapa_Cerrados_correcao_solo_2018", ano=2018)
c("dos_molibdenio_cobalto", "dosagem", "nutriente", """
Molibdênio e cobalto para a fixação biológica: 12 a 25 g/ha de Mo e 2 a 3 g/ha de Co via semente
ou foliar até V5, separado do inoculante.""",
  praticas=["inoculacao"], processos=["fixacao_biologica_n"], estruturas=["fertilidade_quimica"],
  sintomas=["baixa_nodulacao"], ramo="processos_ecologicos/ciclo_nutrientes/fixacao_biologica", cultura=["soja"],
  fonte="Embrapa_Soja_tecnologias_producao_2020", ano=2020)

# ---------------- contraindicações (alta criticidade)
c("con_inoculante_fungicida", "contraindicacao", "incompatibilidade", """
Não misturar inoculante com fungicidas, inseticidas ou micronutrientes no tratamento de sementes
sem comprovação de compatibilidade: a mortalidade de rizóbios derruba a nodulação.""",
  praticas=["inoculacao"], processos=["fixacao_biologica_n"], sintomas=["baixa_nodulacao"],
  ramo="processos_ecologicos/ciclo_nutrientes/fixacao_biologica", cultura=["soja"],
  fonte="Embrapa_Soja_circular_nodulacao_2020", ano=2020, conf=0.9)
c("con_escarificacao_umido", "contraindicacao", "momento_inadequado", """
Escarificação mecânica em solo úmido ou sem cobertura logo em seguida recompacta em poucos meses e
destrói agregados; prefira a descompactação biológica.""",
  praticas=["plantio_direto"], processos=["agregacao"], sintomas=["compactacao"],
  ramo="estruturas_fundamentais/estrutura_solo/estrutura_fisica", cultura=ANY,
  fonte="GAAS_protocolo_diagnostico_solo_2025", ano=2025, tipo="protocolo_gaas")
c("con_herbicida_residual_cobertura", "contraindicacao", "risco_ambiental", """
Herbicidas residuais aplicados na soja podem impedir o estabelecimento do mix de cobertura semeado
logo após a colheita; verificar o intervalo de segurança antes de semear.""",
  praticas=["mix_cobertura", "plantas_cobertura"], processos=["ciclagem"], estruturas=["cobertura_viva"],
  ramo="manejo/praticas_conservacionistas/cobertura", fonte="GAAS_guia_transicao_2025", ano=2025, tipo="protocolo_gaas")

# ---------------- conceitos
c("cei_agricultura_processo", "conceito", "principio", """
Agricultura de Processo: em vez de aplicar insumos contra sintomas, o manejo identifica qual processo
ecológico está travado (fixação, ciclagem, agregação, infiltração) e fortalece as estruturas que o
sustentam. A regra-mãe é percorrer sintoma, causa, processo e estrutura antes da intervenção.""",
  processos=["fixacao_biologica_n", "ciclagem", "agregacao", "infiltracao"], estruturas=["microbiota_solo", "porosidade_funcional"],
  ramo="conceitos/principios", bioma=ANY, cultura=ANY, estagio=ALL_STAGES, escala="propriedade",
  fonte="GAAS_ontologia_v2_2026", ano=2026, tipo="protocolo_gaas", conf=0.95)
c("cei_agricultura_regenerativa", "conceito", "definicao", """
Agricultura regenerativa é o manejo que recupera a saúde do solo e da paisagem enquanto produz:
solo sempre coberto, raízes vivas, diversidade, mínimo revolvimento e integração animal.""",
  praticas=["plantas_cobertura", "plantio_direto", "rotacao_culturas", "integracao_lavoura_pecuaria"],
  processos=["ciclagem", "agregacao", "sequestro_carbono"], estruturas=["cobertura_viva", "biodiversidade_funcional"],
  ramo="conceitos/definicoes", bioma=ANY, cultura=ANY, estagio=ALL_STAGES, escala="propriedade",
  fonte="GAAS_ontologia_v2_2026", ano=2026, tipo="protocolo_gaas", conf=0.95)
c("cei_saude_solo", "conceito", "definicao", """
Saúde do solo é a capacidade de funcionar como sistema vivo: infiltrar e reter água, ciclar
nutrientes, sustentar raízes e suprimir doenças. Mede-se com indicadores físicos, químicos e
biológicos em conjunto.""",
  processos=["infiltracao", "ciclagem", "supressao_biologica"], estruturas=["microbiota_solo", "agregados_estaveis"],
  ramo="conceitos/definicoes", bioma=ANY, cultura=ANY, estagio=ALL_STAGES, escala="propriedade",
  fonte="Embrapa_bioanalise_solo_2020", ano=2020, conf=0.9)

# ---------------- casos
c("cas_nodulacao_go_2024", "caso", "caso_validado", """
Caso validado em Rio Verde (GO): no segundo ano de soja após pastagem degradada a nodulação caiu para
8 nódulos por planta. Reinoculação no sulco, suspensão do nitrogênio de semeadura e gessagem
elevaram para 28 nódulos e 4 sacas a mais por hectare na safra seguinte.""",
  praticas=["inoculacao", "gessagem"], processos=["fixacao_biologica_n"], estruturas=["microbiota_solo", "fertilidade_quimica"],
  sintomas=["baixa_nodulacao"], ramo="casos/graos/cerrado", cultura=["soja"], estagio=["transicao_inicial"],
  tipo="caso_validado_gaas", conf=0.86, fonte="GAAS_relato_produtor_GO_2024", ano=2024)
c("cas_compactacao_mt_2023", "caso", "relato_produtor", """
Relato de produtor em Sorriso (MT): talhão compactado por colheita em solo úmido. Em vez de
escarificar, semeou milheto com crotalária e braquiária; em duas safras a resistência à penetração
caiu de 3,1 para 1,8 MPa e a infiltração triplicou.""",
  praticas=["mix_cobertura", "plantas_cobertura"], processos=["agregacao", "infiltracao"],
  estruturas=["porosidade_funcional", "sistema_radicular"], sintomas=["compactacao", "baixa_infiltracao"],
  ramo="casos/graos/cerrado", estagio=["transicao_inicial", "transicao_intermediaria"], tipo="relato_produtor", conf=0.7,
  fonte="WhatsApp_curado_grupo_MT_2023", ano=2023)
c("cas_erosao_pr_2022", "caso", "caso_validado", """
Caso validado no norte do Paraná: sulcos de erosão em lavoura de soja em encosta foram contidos com
terraços refeitos e aveia com nabo na entressafra; em um ano não houve novos sulcos.""",
  praticas=["terraceamento", "plantas_cobertura"], processos=["infiltracao"], estruturas=["cobertura_viva"],
  sintomas=["erosao", "erosao_em_sulcos"], ramo="casos/graos/mata_atlantica", bioma=["mata_atlantica"],
  tipo="caso_validado_gaas", conf=0.84, fonte="GAAS_relato_produtor_PR_2022", ano=2022)
c("cas_ilp_ms_2021", "caso", "relato_produtor", """
Relato de integração lavoura-pecuária no Mato Grosso do Sul: com braquiária após o milho e gado na
seca, a matéria orgânica subiu de 1,8 para 2,4 por cento em quatro anos e a soja seguinte nodulou
melhor.""",
  praticas=["integracao_lavoura_pecuaria", "plantas_cobertura"], processos=["ciclagem", "sequestro_carbono", "fixacao_biologica_n"],
  estruturas=["palhada", "materia_organica_estavel"], sintomas=["baixa_materia_organica", "baixa_nodulacao"],
  ramo="casos/integracao/cerrado", cultura=["soja", "milho", "braquiaria"], estagio=["transicao_intermediaria"],
  tipo="relato_produtor", conf=0.72, fonte="Rede_ILPF_relatos_2021", ano=2021)
c("cas_nematoides_ba_2024", "caso", "caso_validado", """
Caso validado no oeste da Bahia: reboleiras com galhas na soja reduziram após dois anos de mix com
crotalária e milheto e Bacillus no sulco, sem nematicida químico.""",
  praticas=["mix_cobertura", "bioinsumos", "rotacao_culturas"], processos=["supressao_biologica"],
  estruturas=["biodiversidade_funcional"], sintomas=["galhas_raizes", "amarelecimento_folhas"],
  ramo="casos/graos/cerrado", cultura=["soja", "algodao"], estagio=["transicao_intermediaria"],
  tipo="caso_validado_gaas", conf=0.83, fonte="GAAS_relato_produtor_BA_2024", ano=2024)

# ---------------- evidências
c("evi_coinoculacao_meta", "evidencia", "pesquisa", """
Meta-análise de ensaios no Brasil: a coinoculação de bradirrizóbio com Azospirillum aumentou em média
16 por cento a massa de nódulos e 8 por cento a produtividade da soja em relação à inoculação simples.""",
  praticas=["coinoculacao", "inoculacao"], processos=["fixacao_biologica_n"], estruturas=["microbiota_solo", "sistema_radicular"],
  sintomas=["baixa_nodulacao"], ramo="evidencias/fixacao_biologica", cultura=["soja"],
  tipo="artigo_cientifico", conf=0.9, fonte="Hungria_et_al_coinoculacao_2013", ano=2013)
c("evi_cobertura_infiltracao", "evidencia", "ensaio_campo", """
Ensaio de longa duração no Cerrado: plantio direto com mix de cobertura infiltrou 2,5 vezes mais água
que a sucessão soja e pousio após oito anos.""",
  praticas=["plantio_direto", "mix_cobertura"], processos=["infiltracao", "agregacao"], estruturas=["porosidade_funcional"],
  sintomas=["baixa_infiltracao", "compactacao"], ramo="evidencias/estrutura_fisica",
  tipo="ensaio_campo", conf=0.88, fonte="Embrapa_Cerrados_ensaio_longa_duracao_2022", ano=2022)
c("evi_carbono_ilp", "evidencia", "sintese", """
Síntese de estudos sobre integração lavoura-pecuária: acúmulo médio de 0,5 a 1 tonelada de carbono
por hectare ao ano nos primeiros dez anos, com maior efeito em solos degradados.""",
  praticas=["integracao_lavoura_pecuaria"], processos=["sequestro_carbono"], estruturas=["materia_organica_estavel"],
  ramo="evidencias/carbono", cultura=["soja", "milho", "braquiaria"], tipo="revisao_tecnica", conf=0.8,
  fonte="Rede_ILPF_sintese_carbono_2023", ano=2023)
c("evi_escarificacao_vs_biologica", "evidencia", "ensaio_campo", """
Comparação em Latossolo: o efeito da escarificação mecânica sobre a resistência à penetração durou
menos de um ano, enquanto o mix de cobertura manteve a melhora por três safras.""",
  praticas=["plantas_cobertura", "mix_cobertura", "plantio_direto"], processos=["agregacao"],
  estruturas=["porosidade_funcional"], sintomas=["compactacao"], ramo="evidencias/estrutura_fisica",
  tipo="ensaio_campo", conf=0.82, fonte="UFG_ensaio_descompactacao_2021", ano=2021)

OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
print(len(rows), "chunks")
print(Counter(r["classe_ontologica"] for r in rows))
